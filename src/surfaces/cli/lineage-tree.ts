// `data get`'s human view: the object's facts and schema, then where its data came from as a tree
// (through dropped intermediates, marked, down to files, URLs and existing objects) and each
// column's origins. `--json` prints the REST model unchanged.

import type { LineageNode, ObjectDetail } from "../../models/objects.js";
import { type RenderOptions, relativeTime, renderDetail } from "./render.js";

type Graph = ObjectDetail["lineage_summary"]["graph"];

export function renderObjectWithLineage(detail: ObjectDetail, options: RenderOptions = {}): string {
  const { graph, column_sources: columnSources, produced_by: producedBy, downstream, operations } = detail.lineage_summary;
  const facts = renderDetail({ ...detail, lineage_summary: { produced_by: producedBy, operations } } as unknown as Record<string, unknown>, options, {
    "table_schema.columns": ["name", "type", "nullable"],
    "lineage_summary.operations": ["operation", "at", "job_id", "task_id", "sql"],
  });
  const origins = Object.entries(columnSources)
    .filter(([, list]) => list.length > 0)
    .map(([column, list]) => `  ${column} ← ${list.map((o) => `${o.name}: ${o.column}`).join(", ")}`);
  return [
    facts,
    "",
    "upstream:",
    renderTree(graph, options).replace(/^/gm, "  "),
    ...(origins.length > 0 ? ["", "column sources:", ...origins] : []),
    "",
    `downstream: ${downstream.length > 0 ? downstream.join(", ") : "(none)"}`,
  ].join("\n");
}

/** The upstream graph as a tree from its root; a node reached twice is drawn once, then named. */
export function renderTree(graph: Graph, options: RenderOptions = {}): string {
  const byKey = new Map(graph.nodes.map((n) => [n.key, n]));
  const inputsOf = (key: string) => graph.edges.filter((e) => e.to === key).map((e) => e.from);
  const drawn = new Set<string>();
  const lines: string[] = [];
  const visit = (key: string, prefix: string, branch: string) => {
    const node = byKey.get(key);
    if (!node) return;
    const again = drawn.has(key);
    lines.push(`${prefix}${branch}${label(node, options)}${again ? " (see above)" : ""}`);
    if (again) return;
    drawn.add(key);
    const inputs = inputsOf(key);
    const childPrefix = prefix + (branch === "" ? "" : branch === "└── " ? "    " : "│   ");
    inputs.forEach((input, i) => visit(input, childPrefix, i === inputs.length - 1 ? "└── " : "├── "));
  };
  visit(graph.root, "", "");
  if (graph.truncated) lines.push("… the walk stopped at its bounds (64 operations deep, 1,000 nodes)");
  return lines.join("\n");
}

function label(node: LineageNode, options: RenderOptions): string {
  if (node.kind !== "object") {
    const loaded = node.loaded_at === null ? [] : [`loaded ${options.absolute ? node.loaded_at : relativeTime(Date.parse(node.loaded_at), options.now ?? Date.now())}`];
    const facts = [node.format, node.size_bytes === null ? null : bytes(node.size_bytes), ...loaded].filter(Boolean);
    return `${node.kind} ${node.name} (${facts.join(", ")})`;
  }
  const name = node.table && node.table !== node.name && node.scope !== "temp" ? `${node.name} [${node.table}]` : node.name;
  const facts = [node.scope, node.operation, node.exists ? null : "dropped"].filter(Boolean);
  return `${name} (${facts.join(", ")})`;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
