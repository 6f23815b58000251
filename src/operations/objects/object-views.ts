// Registry rows plus column-store facts to ObjectView / ObjectDetail (CONTRACT §5).

import { toIso } from "../../core/clock.js";
import { type TableSchema, readTableStats, readTableSchema } from "../../data/catalog.js";
import { saveObjectStats } from "../../store/data-objects.js";
import type { ColumnStore } from "../../data/client.js";
import type { LineageNode, ObjectDetail, ObjectView } from "../../models/objects.js";
import { type LineageNode as WalkedNode, WALK_LIMITS, liveObjectNode, walkUpstream } from "../../store/lineage-walk.js";
import type { Store } from "../../store/db.js";
import { type LineageNeighbour, readLineage } from "../../store/object-lineage.js";
import type { DataObjectRow } from "../../store/schema.js";

/**
 * Row count and size from the registry; the objects not measured since their last write are
 * measured in one column-store statement and the figures kept (saveObjectStats).
 */
async function statsOf(db: Store, columns: ColumnStore, rows: DataObjectRow[]): Promise<Map<bigint, { rowCount: number; sizeBytes: number }>> {
  const stats = new Map<bigint, { rowCount: number; sizeBytes: number }>();
  const unmeasured: DataObjectRow[] = [];
  for (const row of rows) {
    if (row.row_count === null || row.size_bytes === null) unmeasured.push(row);
    else stats.set(row.id, { rowCount: Number(row.row_count), sizeBytes: Number(row.size_bytes) });
  }
  if (unmeasured.length === 0) return stats;
  const measured = await readTableStats(columns, unmeasured.map((r) => r.table_name));
  for (const row of unmeasured) {
    // A table with no part yet (nothing inserted) has no row in system.parts: empty.
    const s = measured.get(row.table_name) ?? { rowCount: 0, sizeBytes: 0 };
    stats.set(row.id, s);
    await saveObjectStats(db, row.id, Number(row.stats_epoch), s);
  }
  return stats;
}

export async function toObjectViews(db: Store, columns: ColumnStore, rows: DataObjectRow[]): Promise<ObjectView[]> {
  const stats = await statsOf(db, columns, rows);
  return rows.map((row) => {
    const s = stats.get(row.id);
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
  const [view] = await toObjectViews(db, columns, [row]);
  const [schema, lineage] = await Promise.all([schemaOf(columns, row), readLineage(db, row.id)]);
  // The walk starts from what was just read: the object's row, its log and its first level.
  const start = { root: liveObjectNode(row, lineage.ops), level: lineage.level };
  const walk = await walkUpstream(db, row.id, (schema?.columns ?? []).map((c) => c.name), WALK_LIMITS, start);
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

/** An object's columns, sort key and engine never change (an append adds rows only; a replacement is a new object): read once per object. */
const schemas = new Map<string, TableSchema>();
const SCHEMAS_KEPT = 1_000;

async function schemaOf(columns: ColumnStore, row: DataObjectRow): Promise<TableSchema | null> {
  // Keyed by the store too: two services in one process (tests) may number objects alike.
  const key = `${columns.database}.${row.table_name}#${row.id}`;
  const known = schemas.get(key);
  if (known) return known;
  const schema = await readTableSchema(columns, row.table_name);
  // A missing table is not remembered: it may be there on the next read.
  if (schema) {
    if (schemas.size >= SCHEMAS_KEPT) schemas.delete(schemas.keys().next().value!);
    schemas.set(key, schema);
  }
  return schema;
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
    exists: n.exists,
  };
}
