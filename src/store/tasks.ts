// The tasks and task_deps tables: inserts, lookups and bulk guarded status changes.

import { sql } from "kysely";
import { chunksOf } from "./chunks.js";
import { decodeIdCursor, pageOf } from "./paging.js";
import type { NewTaskRow, TaskRow } from "./schema.js";
import { type Store, isPostgres } from "./db.js";

/** A task with no dependencies (a job's entry task); tasks with some go through dependencies.ts. */
export async function insertTask(db: Store, row: NewTaskRow): Promise<void> {
  await db.insertInto("tasks").values(row).execute();
}

export async function findTaskById(db: Store, id: bigint): Promise<TaskRow | undefined> {
  return db.selectFrom("tasks").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A page of a job's tasks in id order, after `cursor` (a job of 100,000 tasks is read a page at a time). */
/** The columns a page of a job's tasks shows (TaskView and per-task timings): not its arguments or result. */
export const TASK_SUMMARY_COLUMNS = ["id", "job_id", "name", "entrypoint", "status", "attempt", "error", "created_at", "ready_at", "started_at", "completed_at"] as const;
export type TaskSummaryRow = Pick<TaskRow, (typeof TASK_SUMMARY_COLUMNS)[number]>;

export async function pageTasksOfJob(db: Store, jobId: bigint, limit: number, cursor?: string): Promise<{ rows: TaskSummaryRow[]; nextCursor: string | null }> {
  let query = db.selectFrom("tasks").select(TASK_SUMMARY_COLUMNS).where("job_id", "=", jobId).orderBy("id", "asc").limit(limit + 1);
  // An empty cursor is the first page, as on every list (`?tasks_cursor=` from a form left blank).
  if (cursor) query = query.where("id", ">", decodeIdCursor(cursor));
  return pageOf(await query.execute(), limit, (t) => String(t.id));
}

/** The dependency edges of the given tasks, as (task, the task it waits for) pairs. */
export async function listDependenciesOfTasks(db: Store, taskIds: bigint[]): Promise<{ task_id: bigint; depends_on_id: bigint }[]> {
  const edges: { task_id: bigint; depends_on_id: bigint }[] = [];
  for (const chunk of chunksOf(taskIds)) edges.push(...(await db.selectFrom("task_deps").select(["task_id", "depends_on_id"]).where("task_id", "in", chunk).execute()));
  return edges;
}

/**
 * A job's task counts by status and its summed execution time (started to completed, or to now
 * while running), computed in SQL over every task: no row reaches the process.
 */
export async function taskTotalsOfJob(db: Store, jobId: bigint, nowMs: number): Promise<{ byStatus: Map<string, number>; execMs: number }> {
  const end = sql<bigint>`COALESCE(completed_at, ${nowMs})`;
  const rows = await db
    .selectFrom("tasks")
    .select((e) => [
      "status",
      e.fn.countAll().as("n"),
      sql<string | number | bigint | null>`SUM(CASE WHEN started_at IS NOT NULL AND ${end} > started_at THEN ${end} - started_at ELSE 0 END)`.as("exec_ms"),
    ])
    .where("job_id", "=", jobId)
    .groupBy("status")
    .execute();
  return { byStatus: new Map(rows.map((r) => [r.status, Number(r.n)])), execMs: rows.reduce((sum, r) => sum + Number(r.exec_ms ?? 0), 0) };
}

/**
 * A task and the ids it depends on, in one statement (a round trip less on PostgreSQL than the row
 * and then its edges): the edges come as a comma-separated list aggregated beside the row.
 */
export async function findTaskWithDependencies(db: Store, id: bigint): Promise<{ task: TaskRow; dependsOn: bigint[] } | undefined> {
  const edges = isPostgres(db)
    ? sql<string | null>`(SELECT string_agg(depends_on_id::text, ',') FROM task_deps WHERE task_id = tasks.id)`
    : sql<string | null>`(SELECT group_concat(depends_on_id) FROM task_deps WHERE task_id = tasks.id)`;
  const row = await db.selectFrom("tasks").selectAll().select(edges.as("depends_on_ids")).where("id", "=", id).executeTakeFirst();
  if (!row) return undefined;
  const { depends_on_ids, ...task } = row;
  const dependsOn = depends_on_ids ? String(depends_on_ids).split(",").map(BigInt) : [];
  return { task, dependsOn: dependsOn.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
}

/** Tasks a worker holds (claimed or running). */
export async function listTasksHeldBy(db: Store, workerId: bigint): Promise<TaskRow[]> {
  return db.selectFrom("tasks").selectAll().where("worker_id", "=", workerId).where("status", "in", ["CLAIMED", "RUNNING"]).execute();
}
