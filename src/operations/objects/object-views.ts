// Registry rows plus column-store facts to ObjectView / ObjectDetail (CONTRACT §5).

import { toIso } from "../../core/clock.js";
import { readTableStats, readTableSchema } from "../../data/catalog.js";
import type { ColumnStore } from "../../data/client.js";
import type { LineageNode, ObjectDetail, ObjectView } from "../../models/objects.js";
import { type LineageNode as WalkedNode, walkUpstream } from "../../store/lineage-walk.js";
import type { Store } from "../../store/db.js";
import { type LineageNeighbour, readLineage } from "../../store/object-lineage.js";
import type { DataObjectRow } from "../../store/schema.js";

export async function toObjectViews(columns: ColumnStore, rows: DataObjectRow[]): Promise<ObjectView[]> {
  const stats = await readTableStats(columns, rows.map((r) => r.table_name));
  return rows.map((row) => {
    const s = stats.get(row.table_name);
    return {
      name: row.name,
      table: row.table_name,
      scope: row.scope as ObjectView["scope"],
      persistent: row.scope !== "temp",
      row_count: s?.rowCount ?? 0,
      size_bytes: s?.sizeBytes ?? 0,
      created_at: toIso(row.created_at)!,
      job_id: row.job_id === null ? null : row.job_id.toString(),
    };
  });
}

export async function toObjectDetail(db: Store, columns: ColumnStore, row: DataObjectRow): Promise<ObjectDetail> {
  const [view] = await toObjectViews(columns, [row]);
  const [schema, lineage] = await Promise.all([readTableSchema(columns, row.table_name), readLineage(db, row.id)]);
  const walk = await walkUpstream(db, row.id, (schema?.columns ?? []).map((c) => c.name));
  return {
    ...view!,
    table_schema: {
      columns: (schema?.columns ?? []).map((c) => ({
        name: c.name,
        type: c.type,
        nullable: c.nullable,
        array_depth: c.arrayDepth,
        low_cardinality: c.lowCardinality,
      })),
      order_by: schema?.orderBy ?? null,
      engine: schema?.engine ?? "missing",
    },
    lineage_summary: {
      produced_by: lineage.producedBy && {
        job_id: lineage.producedBy.jobId?.toString() ?? null,
        task_id: lineage.producedBy.taskId?.toString() ?? null,
        operation: lineage.producedBy.operation,
      },
      upstream: lineage.upstream,
      downstream: lineage.downstream,
      upstream_objects: lineage.upstreamObjects.map(toLineageObject),
      downstream_objects: lineage.downstreamObjects.map(toLineageObject),
      columns: lineage.columns,
      operations: lineage.operations.map((o) => ({
        operation: o.operation,
        sql: o.sql,
        job_id: o.jobId?.toString() ?? null,
        task_id: o.taskId?.toString() ?? null,
        attempt: o.attempt,
        at: toIso(o.atMs)!,
      })),
      sources: walk.sources.map(toLineageNode),
      column_sources: walk.columnOrigins,
      graph: { root: walk.root, nodes: walk.nodes.map(toLineageNode), edges: walk.edges, truncated: walk.truncated },
    },
  };
}

function toLineageNode(n: WalkedNode): LineageNode {
  return {
    key: n.key,
    kind: n.kind,
    id: n.id?.toString() ?? null,
    name: n.name,
    table: n.table,
    scope: n.scope as LineageNode["scope"],
    job_id: n.jobId?.toString() ?? null,
    exists: n.exists,
    dropped_at: toIso(n.droppedAtMs),
    operation: n.operation,
    sql: n.sql,
    format: n.format,
    size_bytes: n.sizeBytes,
    loaded_at: toIso(n.loadedAtMs),
  };
}

function toLineageObject(n: LineageNeighbour) {
  return {
    id: n.id.toString(),
    name: n.name,
    table: n.row?.table ?? null,
    scope: (n.row?.scope ?? null) as "temp" | "job" | "global" | null,
    job_id: n.row?.jobId?.toString() ?? null,
    exists: n.row !== null,
  };
}
