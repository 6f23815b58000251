// The jobs table: inserts, lookups, filtered pages and guarded status changes.

import type { ExpressionBuilder } from "kysely";
import { countOf, decodeIdCursor, pageOf } from "./paging.js";
import type { Database, JobRow, NewJobRow } from "./schema.js";
import type { Store } from "./db.js";

export interface JobListQuery {
  status?: string;
  name?: string;
  sinceMs?: number;
  limit: number;
  cursor?: string;
}

export type JobWithCounts = JobRow & { total_tasks: unknown; completed_tasks: unknown };

const NON_TERMINAL = ["PENDING", "RUNNING"];

export async function insertJob(db: Store, row: NewJobRow): Promise<void> {
  await db.insertInto("jobs").values(row).execute();
}

export async function findJobById(db: Store, id: bigint): Promise<JobRow | undefined> {
  return db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
}

/** CONTRACT §4: a name means the most recent job of that name. */
export async function findLatestJobByName(db: Store, name: string): Promise<JobRow | undefined> {
  return db.selectFrom("jobs").selectAll().where("name", "=", name).orderBy("id", "desc").limit(1).executeTakeFirst();
}

const taskCounts = (eb: ExpressionBuilder<Database, "jobs">) => [
  eb.selectFrom("tasks").whereRef("tasks.job_id", "=", "jobs.id").select((e) => e.fn.countAll().as("c")).as("total_tasks"),
  eb
    .selectFrom("tasks")
    .whereRef("tasks.job_id", "=", "jobs.id")
    .where("tasks.status", "=", "COMPLETED")
    .select((e) => e.fn.countAll().as("c"))
    .as("completed_tasks"),
];

export async function listJobs(db: Store, q: JobListQuery): Promise<{ rows: JobWithCounts[]; total: number; nextCursor: string | null }> {
  let filtered = db.selectFrom("jobs");
  if (q.status) filtered = filtered.where("status", "=", q.status);
  if (q.name) filtered = filtered.where("name", "=", q.name);
  if (q.sinceMs !== undefined) filtered = filtered.where("created_at", ">=", BigInt(q.sinceMs));

  // Snowflake ids grow with time, so id order is creation order and a unique sort key.
  let page = filtered.selectAll("jobs").select(taskCounts).orderBy("id", "desc").limit(q.limit + 1);
  if (q.cursor) page = page.where("id", "<", decodeIdCursor(q.cursor));

  const [rows, total] = await Promise.all([
    page.execute() as Promise<JobWithCounts[]>,
    filtered.select((e) => e.fn.countAll().as("count")).executeTakeFirst(),
  ]);
  const { rows: items, nextCursor } = pageOf(rows, q.limit, (r) => String(r.id));
  return { rows: items, total: countOf(total), nextCursor };
}

export async function countTasksOfJob(db: Store, jobId: bigint): Promise<{ total: number; completed: number }> {
  const row = await db
    .selectFrom("jobs")
    .where("id", "=", jobId)
    .select(taskCounts)
    .executeTakeFirst();
  return { total: Number(row?.total_tasks ?? 0), completed: Number(row?.completed_tasks ?? 0) };
}

/** Guarded PENDING/RUNNING → CANCELLED; undefined when the job was already terminal. */
export async function markJobCancelled(db: Store, id: bigint, nowMs: number): Promise<JobRow | undefined> {
  const result = await db
    .updateTable("jobs")
    .set({ status: "CANCELLED", completed_at: nowMs, error: "cancelled" })
    .where("id", "=", id)
    .where("status", "in", NON_TERMINAL)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return findJobById(db, id);
}
