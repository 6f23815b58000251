// The parked_objects table (migrations/021): objects a running attempt replaced, until it ends.

import type { Store } from "./db.js";
import type { DataObjectRow, ParkedObjectsTable } from "./schema.js";
import type { Selectable } from "kysely";

export type ParkedRow = Selectable<ParkedObjectsTable>;

/** The registry row's bigint fields, written as decimal strings in object_row's JSON. */
const BIG_FIELDS = ["id", "job_id", "task_id", "created_at", "row_count", "size_bytes"] as const;

const rowJson = (row: DataObjectRow): string =>
  JSON.stringify(Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === "bigint" ? value.toString() : value])));

/** The registry row a parked object had, as it was. */
export function parkedObjectRow(parked: ParkedRow): DataObjectRow {
  const row = JSON.parse(parked.object_row) as Record<string, unknown>;
  for (const field of BIG_FIELDS) if (typeof row[field] === "string") row[field] = BigInt(row[field]);
  if (row.stats_epoch !== undefined) row.stats_epoch = Number(row.stats_epoch);
  return row as unknown as DataObjectRow;
}

export async function insertParked(db: Store, p: { parkedTable: string; row: DataObjectRow; replacementId: bigint; taskId: bigint; attempt: number; nowMs: number }): Promise<void> {
  await db
    .insertInto("parked_objects")
    .values({ parked_table: p.parkedTable, object_id: p.row.id, object_row: rowJson(p.row), replacement_id: p.replacementId, task_id: p.taskId, attempt: p.attempt, parked_at: p.nowMs })
    .execute();
}

/** The object parked for `replacementId`'s sake, if any. */
export async function findParkedFor(db: Store, replacementId: bigint): Promise<ParkedRow | undefined> {
  return db.selectFrom("parked_objects").selectAll().where("replacement_id", "=", replacementId).executeTakeFirst();
}

/** The parked copy of `objectId`'s rows, if another attempt replaced it and has not ended. */
export async function findParkedObject(db: Store, objectId: bigint): Promise<ParkedRow | undefined> {
  return db.selectFrom("parked_objects").selectAll().where("object_id", "=", objectId).executeTakeFirst();
}

export async function findParkedOfAttempt(db: Store, taskId: bigint, attempt: number): Promise<ParkedRow[]> {
  return db.selectFrom("parked_objects").selectAll().where("task_id", "=", taskId).where("attempt", "=", attempt).orderBy("parked_at").execute();
}

export async function findParkedByTable(db: Store, parkedTable: string): Promise<ParkedRow | undefined> {
  return db.selectFrom("parked_objects").selectAll().where("parked_table", "=", parkedTable).executeTakeFirst();
}

export async function deleteParked(db: Store, parkedTable: string): Promise<void> {
  await db.deleteFrom("parked_objects").where("parked_table", "=", parkedTable).execute();
}

/** Moves a parked object to another replacement (the replacement it waited for was replaced within its attempt). */
export async function reassignParked(db: Store, parkedTable: string, replacementId: bigint): Promise<void> {
  await db.updateTable("parked_objects").set({ replacement_id: replacementId }).where("parked_table", "=", parkedTable).execute();
}

/** Hands the rows another parked record waits with over to `into` (objects/parking.ts, failure of an earlier replacement). */
export async function replaceParkedObject(db: Store, into: string, from: ParkedRow): Promise<void> {
  await db.updateTable("parked_objects").set({ object_id: from.object_id, object_row: from.object_row }).where("parked_table", "=", into).execute();
}

/**
 * Parked objects whose attempt is over: its task no longer runs that attempt. `succeeded` says
 * whether that attempt completed the task (then the parked rows go) or not (they are put back).
 */
export async function findParkedOfEndedAttempts(db: Store, olderThanMs: number, limit = 100): Promise<Array<ParkedRow & { succeeded: boolean }>> {
  const rows = await db
    .selectFrom("parked_objects as p")
    .leftJoin("tasks as t", "t.id", "p.task_id")
    .selectAll("p")
    .select(["t.status as task_status", "t.attempt as task_attempt"])
    .where("p.parked_at", "<", BigInt(olderThanMs))
    .orderBy("p.parked_at")
    .limit(limit)
    .execute();
  // Numbers as numbers: SQLite answers integers as bigints.
  const ranBy = (r: { task_attempt: unknown; attempt: unknown }) => Number(r.task_attempt) === Number(r.attempt);
  return rows
    .filter((r) => !(r.task_status === "RUNNING" && ranBy(r)))
    .map(({ task_status, task_attempt, ...parked }) => ({ ...parked, succeeded: task_status === "COMPLETED" && ranBy({ task_attempt, attempt: parked.attempt }) }));
}
