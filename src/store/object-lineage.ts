// The operation log and lineage of data objects (CONTRACT §5): which operation made an object from
// which inputs, with what SQL, in which job, task and attempt; and which columns came from which.

import type { Store } from "./db.js";

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
  if (op.columns.length > 0) {
    await db
      .insertInto("column_lineage")
      .values(
        op.columns.map((c) => ({ object_id: op.objectId, column_name: c.column, input_id: c.inputId, input_name: c.inputName, input_column: c.inputColumn })),
      )
      .execute();
  }
}

export interface LineageFacts {
  producedBy: { jobId: bigint | null; taskId: bigint | null; operation: string } | null;
  upstream: string[];
  downstream: string[];
  columns: Record<string, { object: string; column: string }[]>;
  operations: { operation: string; sql: string; jobId: bigint | null; taskId: bigint | null; attempt: number | null; atMs: number }[];
}

/** The direct neighbours of an object in the operation log. */
export async function readLineage(db: Store, objectId: bigint): Promise<LineageFacts> {
  const [ops, upstream, downstream, columns] = await Promise.all([
    db.selectFrom("object_ops").selectAll().where("object_id", "=", objectId).orderBy("id").execute(),
    db.selectFrom("object_inputs").select("input_name").distinct().where("object_id", "=", objectId).orderBy("input_name").execute(),
    db.selectFrom("object_inputs").select("object_name").distinct().where("input_id", "=", objectId).orderBy("object_name").execute(),
    db.selectFrom("column_lineage").selectAll().where("object_id", "=", objectId).execute(),
  ]);
  const first = ops[0];
  const byColumn: Record<string, { object: string; column: string }[]> = {};
  for (const c of columns) (byColumn[c.column_name] ??= []).push({ object: c.input_name, column: c.input_column });
  return {
    producedBy: first ? { jobId: first.job_id, taskId: first.task_id, operation: first.operation } : null,
    upstream: upstream.map((r) => r.input_name),
    downstream: downstream.map((r) => r.object_name),
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
