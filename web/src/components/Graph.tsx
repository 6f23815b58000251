// A read-only graph (React Flow, laid out by dagre): each node a link with its status in words. The
// layout is recomputed only when the graph's shape changes, not on every 2 s poll of its statuses.

import "@xyflow/react/dist/style.css";
import { Background, Controls, type Edge, Handle, type Node, type NodeProps, Position, ReactFlow } from "@xyflow/react";
import { memo, useMemo } from "react";
import { type GraphEdge, layoutGraph } from "../lib/graph-layout.js";
import { Link } from "./Link.js";

export interface GraphNode {
  id: string;
  label: string;
  detail?: string;
  status?: string;
  href?: string;
  emphasis?: boolean;
}

type LabelData = { node: GraphNode; direction: "TB" | "LR" };

const GraphNodeView = memo(function GraphNodeView({ data }: NodeProps<Node<LabelData>>) {
  const { node, direction } = data;
  const vertical = direction === "TB";
  const label = (
    <>
      <span className="graph-node-label">{node.label}</span>
      {node.status || node.detail ? (
        <span className="graph-node-detail">
          {node.status ? <span className={`status status-${node.status.toLowerCase()}`}>{node.status}</span> : null} {node.detail ?? ""}
        </span>
      ) : null}
    </>
  );
  return (
    <div className={`graph-node${node.emphasis ? " graph-node-emphasis" : ""}`} data-status={node.status ?? ""} data-node-id={node.id}>
      <Handle type="target" position={vertical ? Position.Top : Position.Left} isConnectable={false} />
      {node.href ? (
        <Link href={node.href} className="graph-node-link">
          {label}
        </Link>
      ) : (
        label
      )}
      <Handle type="source" position={vertical ? Position.Bottom : Position.Right} isConnectable={false} />
    </div>
  );
});

const NODE_TYPES = { label: GraphNodeView };

/** Above this many nodes only the visible ones are rendered (a job of 1,000 tasks stays responsive). */
const VIRTUALIZE_ABOVE = 150;

export function GraphView({ nodes, edges, direction, label }: { nodes: GraphNode[]; edges: GraphEdge[]; direction: "TB" | "LR"; label: string }) {
  const shape = nodes.map((n) => n.id).join(",") + "|" + edges.map((e) => `${e.source}>${e.target}`).join(",");
  // Keyed by the shape string: a poll that only changed statuses keeps the positions.
  const positions = useMemo(() => layoutGraph(nodes.map((n) => n.id), edges, direction), [shape, direction]);
  // What a node shows: a poll that changed nothing hands React Flow the same arrays (no re-render).
  const content = nodes.map((n) => `${n.id}:${n.status ?? ""}:${n.detail ?? ""}:${n.label}`).join("\n");
  const flowNodes: Node<LabelData>[] = useMemo(
    () =>
      nodes.map((node) => ({
        id: node.id,
        type: "label",
        position: positions.get(node.id) ?? { x: 0, y: 0 },
        data: { node, direction },
        draggable: false,
        connectable: false,
        selectable: false,
      })),
    [content, positions],
  );
  const flowEdges: Edge[] = useMemo(() => edges.map((edge) => ({ id: `${edge.source}>${edge.target}`, source: edge.source, target: edge.target })), [shape]);
  return (
    <figure className="graph" aria-label={label}>
      <ReactFlow
        nodes={flowNodes}
        edges={flowEdges}
        nodeTypes={NODE_TYPES}
        fitView
        fitViewOptions={{ maxZoom: 1.2 }}
        minZoom={0.05}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        onlyRenderVisibleElements={nodes.length > VIRTUALIZE_ABOVE}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </figure>
  );
}
