// The tasks and task_deps tables: inserts, lookups and bulk guarded status changes.

import { sql } from "kysely";
import { decodeIdCursor, pageOf } from "./paging.js";
import type { NewTaskRow, TaskRow } from "./schema.js";
import { type Store, isPostgres } from "./db.js";
import { type Given, prepared } from "./prepared.js";

/** A task with no dependencies (a job's entry task); tasks with some go through dependencies.ts. */
export async function insertTask(db: Store, row: NewTaskRow): Promise<void> {
  await db.insertInto("tasks").values(row).execute();
}

const taskById = prepared((db, v: { id: bigint }) => db.selectFrom("tasks").selectAll().where("id", "=", v.id));

export async function findTaskById(db: Store, id: bigint): Promise<TaskRow | undefined> {
  return taskById.first(db, { id });
}

/** A page of a job's tasks in id order, after `cursor` (a job of 100,000 tasks is read a page at a time). */
/** The columns a page of a job's tasks shows (TaskView and per-task timings): not its arguments or result. */
export const TASK_SUMMARY_COLUMNS = ["id", "job_id", "name", "entrypoint", "status", "attempt", "error", "created_at", "ready_at", "started_at", "completed_at"] as const;
export type TaskSummaryRow = Pick<TaskRow, (typeof TASK_SUMMARY_COLUMNS)[number]>;

export async function pageTasksOfJob(db: Store, jobId: bigint, limit: number, cursor?: string): Promise<{ rows: TaskSummaryRow[]; nextCursor: string | null }> {
  // An empty cursor is the first page, as on every list (`?tasks_cursor=` from a form left blank).
  const page = await tasksOfJob.rows(db, { jobId, limit: limit + 1, after: cursor ? decodeIdCursor(cursor) : undefined });
  return pageOf(page, limit, (t) => String(t.id));
}

type JobPageValues = { jobId: bigint; limit: number; after: bigint | undefined };

/** A page of a job's tasks in id order, after a cursor's id when one is given. */
const jobTaskPage = (db: Store, v: JobPageValues, given: Given<JobPageValues>) => {
  const page = db.selectFrom("tasks").select(TASK_SUMMARY_COLUMNS).where("job_id", "=", v.jobId).orderBy("id", "asc").limit(v.limit);
  return given.after ? page.where("id", ">", v.after!) : page;
};

const tasksOfJob = prepared(jobTaskPage);

/**
 * A page of a job's tasks, each with the ids it depends on (ascending, as decimal strings), in one
 * statement: the edges are aggregated beside each row instead of read in a second round trip.
 */
export async function pageTasksOfJobWithDependencies(
  db: Store,
  jobId: bigint,
  limit: number,
  cursor?: string,
): Promise<{ rows: (TaskSummaryRow & { dependsOn: string[] })[]; nextCursor: string | null }> {
  const page = await tasksWithDependencies.rows(db, { jobId, limit: limit + 1, after: cursor ? decodeIdCursor(cursor) : undefined });
  const { rows, nextCursor } = pageOf(page, limit, (t) => String(t.id));
  return { rows: rows.map((row) => Object.assign(row, { dependsOn: splitIds(row.depends_on_ids) })), nextCursor };
}

/** The same page with each task's dependencies beside it. */
const tasksWithDependencies = prepared((db, v: JobPageValues, given) => jobTaskPage(db, v, given).select(dependencyIdsOf(db).as("depends_on_ids")));

/** The ids a task (the row `tasks.id`) depends on, as one comma-separated text, or null when none. */
const dependencyIdsOf = (db: Store) =>
  isPostgres(db)
    ? sql<string | null>`(SELECT string_agg(depends_on_id::text, ',') FROM task_deps WHERE task_id = tasks.id)`
    : sql<string | null>`(SELECT group_concat(depends_on_id) FROM task_deps WHERE task_id = tasks.id)`;

/** "12,9" → ["9", "12"]: ids in ascending order (non-negative integers without leading zeros). */
const splitIds = (text: string | null): string[] =>
  text ? String(text).split(",").sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)) : [];

const taskTotals = prepared((db, v: { jobId: bigint; nowMs: number }) => {
  const end = sql<bigint>`COALESCE(completed_at, ${v.nowMs})`;
  return db
    .selectFrom("tasks")
    .select((e) => [
      "status",
      e.fn.countAll().as("n"),
      sql<string | number | bigint | null>`SUM(CASE WHEN started_at IS NOT NULL AND ${end} > started_at THEN ${end} - started_at ELSE 0 END)`.as("exec_ms"),
    ])
    .where("job_id", "=", v.jobId)
    .groupBy("status");
});

/**
 * A job's task counts by status and its summed execution time (started to completed, or to now
 * while running), computed in SQL over every task: no row reaches the process.
 */
export async function taskTotalsOfJob(db: Store, jobId: bigint, nowMs: number): Promise<{ byStatus: Map<string, number>; execMs: number }> {
  const rows = await taskTotals.rows(db, { jobId, nowMs });
  return { byStatus: new Map(rows.map((r) => [r.status, Number(r.n)])), execMs: rows.reduce((sum, r) => sum + Number(r.exec_ms ?? 0), 0) };
}

const taskWithDependencies = prepared((db, v: { id: bigint }) =>
  db.selectFrom("tasks").selectAll().select(dependencyIdsOf(db).as("depends_on_ids")).where("id", "=", v.id),
);

/**
 * A task and the ids it depends on, in one statement (a round trip less on PostgreSQL than the row
 * and then its edges): the edges come as a comma-separated list aggregated beside the row.
 */
export async function findTaskWithDependencies(db: Store, id: bigint): Promise<{ task: TaskRow; dependsOn: string[] } | undefined> {
  const row = await taskWithDependencies.first(db, { id });
  if (!row) return undefined;
  // The row itself, its dependencies' text beside: a rest pattern would copy it field by field.
  return { task: row, dependsOn: splitIds(row.depends_on_ids) };
}

/** Tasks a worker holds (claimed or running). */
export async function listTasksHeldBy(db: Store, workerId: bigint): Promise<TaskRow[]> {
  return db.selectFrom("tasks").selectAll().where("worker_id", "=", workerId).where("status", "in", ["CLAIMED", "RUNNING"]).execute();
}

/** The status of a task while it is still `attempt` on `workerId`; undefined once it has moved on. */
export async function statusOfAttempt(db: Store, taskId: bigint, workerId: bigint, attempt: number): Promise<string | undefined> {
  const row = await db.selectFrom("tasks").select(["status", "worker_id", "attempt"]).where("id", "=", taskId).executeTakeFirst();
  return row && row.worker_id === workerId && Number(row.attempt) === attempt ? row.status : undefined;
}

/** Tasks of other jobs that reused a task of this one (a re-run from failure), with their results. */
export async function findReusersOfJob(db: Store, jobId: bigint): Promise<{ job_id: bigint; result_ref: string | null }[]> {
  return db
    .selectFrom("tasks as original")
    .innerJoin("tasks as reuser", "reuser.reused_from", "original.id")
    .select(["reuser.job_id", "reuser.result_ref"])
    .where("original.job_id", "=", jobId)
    .where("reuser.reused_from", "is not", null)
    .where("reuser.job_id", "!=", jobId)
    .execute();
}
