// A read-only graph (React Flow, laid out by dagre): each node a link with its status in words. The
// layout is recomputed only when the graph's shape changes, not on every 2 s poll of its statuses.

import "@xyflow/react/dist/style.css";
import { Background, Controls, type Edge, Handle, type Node, type NodeProps, Position, ReactFlow } from "@xyflow/react";
import { memo, useLayoutEffect, useMemo, useRef, useState } from "react";
import { type GraphEdge, NODE_HEIGHT, NODE_WIDTH, layoutGraph } from "../lib/graph-layout.js";
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

/**
 * The smallest zoom the first view takes: below it a node's name and status cannot be read (a
 * fan-out of 150 was fitted at 0.05, a grey line; at 0.4 its 12-pixel text was under 5 pixels, still
 * unreadable). A larger graph opens at this size on its middle, with a line saying how to see the
 * rest; the reader may still zoom out to 0.05.
 */
const READABLE_ZOOM = 0.6;

/** The zoom at which the laid-out graph fits a box of `width` × `height` (fitView's padding of 0.1 leaves it width ÷ 1.1). */
function fittingZoom(positions: Map<string, { x: number; y: number }>, width: number, height: number): number {
  if (positions.size === 0 || width === 0 || height === 0) return 1;
  const xs = [...positions.values()].map((p) => p.x);
  const ys = [...positions.values()].map((p) => p.y);
  const graphWidth = Math.max(...xs) - Math.min(...xs) + NODE_WIDTH;
  const graphHeight = Math.max(...ys) - Math.min(...ys) + NODE_HEIGHT;
  return Math.min(width / (graphWidth * 1.1), height / (graphHeight * 1.1));
}

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
  const figure = useRef<HTMLElement>(null);
  const [partial, setPartial] = useState(false);
  useLayoutEffect(() => {
    const box = figure.current;
    if (box) setPartial(fittingZoom(positions, box.clientWidth, box.clientHeight) < READABLE_ZOOM);
  }, [positions]);
  return (
    <>
      {partial ? (
        <p className="muted graph-hint">
          {nodes.length.toLocaleString("en-US")} nodes are too many to read at once: the graph opens on its middle at a readable size. Drag to move around, scroll or use − to zoom out.
        </p>
      ) : null}
      <figure className="graph" aria-label={label} ref={figure}>
        <ReactFlow
          nodes={flowNodes}
          edges={flowEdges}
          nodeTypes={NODE_TYPES}
          fitView
          fitViewOptions={{ maxZoom: 1.2, minZoom: READABLE_ZOOM }}
          minZoom={0.05}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          // One keyboard stop per node, its link: the node's box and every edge were stops too
          // (about 1,800 before the task table for a job of 600 tasks).
          nodesFocusable={false}
          edgesFocusable={false}
          onlyRenderVisibleElements={nodes.length > VIRTUALIZE_ABOVE}
        >
          <Background gap={16} size={1} />
          <Controls showInteractive={false} />
        </ReactFlow>
      </figure>
    </>
  );
}
