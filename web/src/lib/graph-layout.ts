// Positions for a directed graph (dagre's layered layout): the job's task DAG and an object's lineage.

import { Graph, layout } from "@dagrejs/dagre";

export interface GraphEdge {
  source: string;
  target: string;
}

export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 52;

/** Top-left corner of each node, by id. Edges to unknown nodes are ignored. */
export function layoutGraph(ids: readonly string[], edges: readonly GraphEdge[], direction: "TB" | "LR"): Map<string, { x: number; y: number }> {
  const graph = new Graph();
  graph.setGraph({ rankdir: direction, nodesep: 24, ranksep: 56, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  const known = new Set(ids);
  for (const id of ids) graph.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of edges) if (known.has(edge.source) && known.has(edge.target)) graph.setEdge(edge.source, edge.target);
  layout(graph);
  const positions = new Map<string, { x: number; y: number }>();
  for (const id of ids) {
    const node = graph.node(id) as { x: number; y: number };
    positions.set(id, { x: node.x - NODE_WIDTH / 2, y: node.y - NODE_HEIGHT / 2 });
  }
  return positions;
}
