// The operation log and lineage of data objects (CONTRACT §5): which operation made an object from
// which inputs, with what SQL, in which job, task and attempt; and which columns came from which.

import type { Store } from "./db.js";
import { type UpstreamLevel, readUpstreamLevel } from "./lineage-walk.js";
import type { ObjectOpRow } from "./schema.js";

export interface OperationRecord {
  id: bigint;
  objectId: bigint;
  objectName: string;
  operation: string;
  sqlText: string;
  jobId: bigint | null;
  taskId: bigint | null;
  attempt: number | null;
  nowMs: number;
  inputs: { id: bigint; name: string }[];
  columns: { column: string; inputId: bigint; inputName: string; inputColumn: string }[];
  /** External inputs of a load (files and URLs): their columns are the object's own. */
  sources?: ExternalSource[];
}

export interface ExternalSource {
  kind: "file" | "url";
  /** An absolute path or the URL as given. */
  location: string;
  format: string;
  sizeBytes: number | null;
}

export async function recordOperation(db: Store, op: OperationRecord): Promise<void> {
  await db
    .insertInto("object_ops")
    .values({
      id: op.id,
      object_id: op.objectId,
      object_name: op.objectName,
      operation: op.operation,
      sql_text: op.sqlText,
      job_id: op.jobId,
      task_id: op.taskId,
      attempt: op.attempt,
      created_at: op.nowMs,
    })
    .execute();
  if (op.inputs.length > 0) {
    await db
      .insertInto("object_inputs")
      .values(op.inputs.map((input) => ({ op_id: op.id, object_id: op.objectId, object_name: op.objectName, input_id: input.id, input_name: input.name })))
      .execute();
  }
  if (op.sources && op.sources.length > 0) {
    await db
      .insertInto("object_sources")
      .values(
        op.sources.map((source) => ({
          op_id: op.id,
          object_id: op.objectId,
          kind: source.kind,
          location: source.location,
          format: source.format,
          size_bytes: source.sizeBytes,
          loaded_at: op.nowMs,
        })),
      )
      .execute();
  }
  if (op.columns.length > 0) {
    await db
      .insertInto("column_lineage")
      .values(
        op.columns.map((c) => ({ object_id: op.objectId, column_name: c.column, input_id: c.inputId, input_name: c.inputName, input_column: c.inputColumn })),
      )
      .execute();
  }
}

/** A neighbour in the operation log, exactly: the object itself, not whatever has its name now. */
export interface LineageNeighbour {
  id: bigint;
  name: string;
  /** Its registry row, or once it was dropped (a temp, a replaced or deleted object) what was kept of it. */
  row: { table: string; scope: string; jobId: bigint | null } | null;
  /** False once it was dropped. */
  exists: boolean;
}

export interface LineageFacts {
  producedBy: { jobId: bigint | null; taskId: bigint | null; operation: string } | null;
  upstream: string[];
  downstream: string[];
  upstreamObjects: LineageNeighbour[];
  downstreamObjects: LineageNeighbour[];
  columns: Record<string, { object: string; column: string }[]>;
  operations: { operation: string; sql: string; jobId: bigint | null; taskId: bigint | null; attempt: number | null; atMs: number }[];
}

/**
 * The direct neighbours of an object in the operation log, with what the upstream walk starts from:
 * the object's log (`ops`) and its first level (`level`), read once for both.
 */
export async function readLineage(db: Store, objectId: bigint): Promise<LineageFacts & { ops: ObjectOpRow[]; level: UpstreamLevel }> {
  const [ops, level, downstream] = await Promise.all([
    db.selectFrom("object_ops").selectAll().where("object_id", "=", objectId).orderBy("id").execute(),
    readUpstreamLevel(db, [objectId]),
    db.selectFrom("object_inputs").select(["object_id as id", "object_name as name"]).distinct().where("input_id", "=", objectId).orderBy("object_id").execute(),
  ]);
  const upstream = distinctNeighbours(level.inputs.map((i) => ({ id: i.input_id, name: i.input_name })));
  const columns = level.lineage;
  const ids = [...new Set([...upstream, ...downstream].map((n) => n.id))];
  const [rows, droppedRows] =
    ids.length === 0
      ? [[], []]
      : await Promise.all([
          db.selectFrom("data_objects").select(["id", "table_name", "scope", "job_id"]).where("id", "in", ids).execute(),
          db.selectFrom("dropped_objects").select(["id", "table_name", "scope", "job_id"]).where("id", "in", ids).execute(),
        ]);
  const rowOf = (r: { table_name: string; scope: string; job_id: bigint | null }) => ({ table: r.table_name, scope: r.scope, jobId: r.job_id });
  const live = new Map(rows.map((r) => [r.id, rowOf(r)]));
  // A dropped neighbour keeps its table, scope and job (docs/LINEAGE.md), as the graph's node does.
  const dropped = new Map(droppedRows.map((r) => [r.id, rowOf(r)]));
  const neighbour = (n: { id: bigint; name: string }): LineageNeighbour => ({ id: n.id, name: n.name, row: live.get(n.id) ?? dropped.get(n.id) ?? null, exists: live.has(n.id) });
  const names = (list: { name: string }[]) => [...new Set(list.map((n) => n.name))].sort();
  const first = ops[0];
  const byColumn: Record<string, { object: string; column: string }[]> = {};
  for (const c of columns) (byColumn[c.column_name] ??= []).push({ object: c.input_name, column: c.input_column });
  return {
    ops,
    level,
    producedBy: first ? { jobId: first.job_id, taskId: first.task_id, operation: first.operation } : null,
    upstream: names(upstream),
    downstream: names(downstream),
    upstreamObjects: upstream.map(neighbour),
    downstreamObjects: downstream.map(neighbour),
    columns: byColumn,
    operations: ops.map((o) => ({
      operation: o.operation,
      sql: o.sql_text,
      jobId: o.job_id,
      taskId: o.task_id,
      attempt: o.attempt === null ? null : Number(o.attempt),
      atMs: Number(o.created_at),
    })),
  };
}

/** Each (id, name) pair once, by id (then name): what SELECT DISTINCT … ORDER BY id gave. */
function distinctNeighbours(list: { id: bigint; name: string }[]): { id: bigint; name: string }[] {
  const seen = new Map<string, { id: bigint; name: string }>();
  for (const n of list) seen.set(`${n.id}\u0000${n.name}`, n);
  return [...seen.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
