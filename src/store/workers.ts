// The workers table: registration, heartbeats, filtered pages and guarded status changes.

import { countOf, decodeIdCursor, pageOf } from "./paging.js";
import type { WorkerRow } from "./schema.js";
import type { Store } from "./db.js";
import { prepared } from "./prepared.js";

export interface NewWorker {
  id: bigint;
  hostname: string;
  pid: number;
  concurrency: number;
  maxTasks: number | null;
  nowMs: number;
}

export async function insertWorker(db: Store, w: NewWorker): Promise<void> {
  await db
    .insertInto("workers")
    .values({
      id: w.id,
      hostname: w.hostname,
      pid: w.pid,
      status: "ACTIVE",
      concurrency: w.concurrency,
      max_tasks: w.maxTasks,
      started_at: w.nowMs,
      last_heartbeat: w.nowMs,
      tasks_completed: 0,
      tasks_failed: 0,
    })
    .execute();
}

const workerById = prepared((db, v: { id: bigint }) => db.selectFrom("workers").selectAll().where("id", "=", v.id));

export async function findWorkerById(db: Store, id: bigint): Promise<WorkerRow | undefined> {
  return workerById.first(db, { id });
}

export async function listWorkers(
  db: Store,
  q: { status?: string; limit: number; cursor?: string },
): Promise<{ rows: WorkerRow[]; total: number; nextCursor: string | null }> {
  const status = q.status || undefined;
  const before = q.cursor ? decodeIdCursor(q.cursor) : undefined;
  const [rows, total] = await Promise.all([workerList.page.rows(db, { status, before, limit: q.limit + 1 }), workerList.count.first(db, { status })]);
  const { rows: items, nextCursor } = pageOf(rows, q.limit, (r) => String(r.id));
  return { rows: items, total: countOf(total), nextCursor };
}

const workerList = (() => {
  const filtered = (db: Store, status: string | undefined, given: boolean) => (given ? db.selectFrom("workers").where("status", "=", status!) : db.selectFrom("workers"));
  return {
    page: prepared((db, v: { status: string | undefined; before: bigint | undefined; limit: number }, given) => {
      const page = filtered(db, v.status, given.status).selectAll().orderBy("id", "desc").limit(v.limit);
      return given.before ? page.where("id", "<", v.before!) : page;
    }),
    count: prepared((db, v: { status: string | undefined }, given) => filtered(db, v.status, given.status).select((e) => e.fn.countAll().as("count"))),
  };
})();

/** Guarded ACTIVE → STOPPING (CONTRACT §3); undefined when the worker was not active. */
export async function markWorkerStopping(db: Store, id: bigint): Promise<WorkerRow | undefined> {
  const result = await db.updateTable("workers").set({ status: "STOPPING" }).where("id", "=", id).where("status", "=", "ACTIVE").executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return findWorkerById(db, id);
}

/**
 * Attempts a worker ended since it last reported them. They travel with heartbeats rather than with
 * each completion or failure: those statements then never touch the worker's row, which the claim
 * reads FOR SHARE (a failure that locked its dependents and then waited on that row deadlocked with
 * a completion-and-claim that held the row and waited on the same dependents).
 */
export interface AttemptCounts {
  completed: number;
  failed: number;
}

export const NO_ATTEMPTS: AttemptCounts = { completed: 0, failed: 0 };

/** Guarded ACTIVE/STOPPING → STOPPED when a worker exits on its own, with its last counts. */
export async function markWorkerStopped(db: Store, id: bigint, nowMs: number, counts: AttemptCounts = NO_ATTEMPTS): Promise<boolean> {
  const result = await db
    .updateTable("workers")
    .set((eb) => ({ status: "STOPPED", stopped_at: nowMs, tasks_completed: eb("tasks_completed", "+", counts.completed), tasks_failed: eb("tasks_failed", "+", counts.failed) }))
    .where("id", "=", id)
    .where("status", "in", ["ACTIVE", "STOPPING"])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Records a heartbeat and the attempts ended since the last one; returns the worker's status so a
 * STOPPING or LOST worker learns to exit.
 */
export async function recordHeartbeat(db: Store, id: bigint, nowMs: number, counts: AttemptCounts = NO_ATTEMPTS): Promise<string | undefined> {
  await db
    .updateTable("workers")
    .set((eb) => ({ last_heartbeat: nowMs, tasks_completed: eb("tasks_completed", "+", counts.completed), tasks_failed: eb("tasks_failed", "+", counts.failed) }))
    .where("id", "=", id)
    .where("status", "in", ["ACTIVE", "STOPPING"])
    .execute();
  const row = await db.selectFrom("workers").select("status").where("id", "=", id).executeTakeFirst();
  return row?.status;
}

/** Workers silent since before `cutoffMs` that are still ACTIVE or STOPPING. */
export async function findSilentWorkers(db: Store, cutoffMs: number): Promise<WorkerRow[]> {
  return db
    .selectFrom("workers")
    .selectAll()
    .where("status", "in", ["ACTIVE", "STOPPING"])
    .where("last_heartbeat", "<", BigInt(cutoffMs))
    .execute();
}

/** Guarded ACTIVE/STOPPING → LOST; false when the worker spoke or stopped meanwhile. */
export async function markWorkerLost(db: Store, id: bigint, cutoffMs: number, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable("workers")
    .set({ status: "LOST", stopped_at: nowMs })
    .where("id", "=", id)
    .where("status", "in", ["ACTIVE", "STOPPING"])
    .where("last_heartbeat", "<", BigInt(cutoffMs))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The reaper's count of a lost worker's attempts it failed (that worker reports nothing more). */
export async function countFailedAttempts(db: Store, id: bigint, failed: number): Promise<void> {
  if (failed === 0) return;
  await db.updateTable("workers").set((eb) => ({ tasks_failed: eb("tasks_failed", "+", failed) })).where("id", "=", id).execute();
}

/**
 * Retention of worker rows: STOPPED and LOST workers last heard of before the cutoff are deleted,
 * unless a task or an earlier attempt still kept names one. A job is kept from its end, and a
 * worker that ran one of its tasks may have ended long before: its row says which host holds the
 * attempt's log, and the task page links to it.
 */
export async function deleteEndedWorkersBefore(db: Store, cutoffMs: number): Promise<number> {
  const result = await db
    .deleteFrom("workers")
    .where("status", "in", ["STOPPED", "LOST"])
    .where((eb) => eb(eb.fn.coalesce("stopped_at", "last_heartbeat", "started_at"), "<", BigInt(cutoffMs)))
    .where((eb) => eb.not(eb.exists(eb.selectFrom("tasks").select("tasks.id").whereRef("tasks.worker_id", "=", "workers.id"))))
    .where((eb) => eb.not(eb.exists(eb.selectFrom("task_attempts").select("task_attempts.task_id").whereRef("task_attempts.worker_id", "=", "workers.id"))))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
