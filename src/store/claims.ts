// Claiming ready tasks for a worker: one atomic UPDATE … RETURNING, so two workers never claim the
// same task. PostgreSQL adds FOR UPDATE SKIP LOCKED so concurrent claimers skip each other's rows
// instead of queueing; SQLite has a single writer and needs no row locks.

import { type Store, isPostgres } from "./db.js";
import type { TaskRow } from "./schema.js";

export interface ClaimResult {
  tasks: TaskRow[];
  /** The worker's own status; only an ACTIVE worker claims (a LOST one must not take its retries back). */
  workerStatus: string | undefined;
  /** Jobs this claim moved from PENDING to RUNNING. */
  startedJobs: bigint[];
}

export async function claimReadyTasks(db: Store, workerId: bigint, limit: number, nowMs: number): Promise<ClaimResult> {
  const postgres = isPostgres(db);
  return db.transaction().execute(async (tx) => {
    // FOR SHARE holds off the lost-worker reaper until this claim commits, so the reaper then sees
    // (and retries) what was claimed, or the claim sees LOST and takes nothing.
    let workerQuery = tx.selectFrom("workers").select("status").where("id", "=", workerId);
    if (postgres) workerQuery = workerQuery.forShare();
    const worker = await workerQuery.executeTakeFirst();
    if (worker?.status !== "ACTIVE" || limit <= 0) return { tasks: [], workerStatus: worker?.status, startedJobs: [] };
    let ready = tx
      .selectFrom("tasks")
      .select("id")
      .where("status", "=", "PENDING")
      .where("pending_deps", "=", 0)
      .where("ready_at", "<=", BigInt(nowMs))
      .orderBy("ready_at")
      .orderBy("id")
      .limit(limit);
    if (postgres) ready = ready.forUpdate().skipLocked();
    // Ids first, then the update by primary key: as one statement with a subquery, SQLite plans the
    // outer update over every pending task, which at 10,000 pending tasks costs more than the work.
    const ids = (await ready.execute()).map((r) => r.id);
    if (ids.length === 0) return { tasks: [], workerStatus: worker.status, startedJobs: [] };
    const claimed = await tx
      .updateTable("tasks")
      .set({ status: "CLAIMED", worker_id: workerId, claimed_at: nowMs })
      .where("id", "in", ids)
      .where("status", "=", "PENDING")
      .returningAll()
      .execute();
    let startedJobs: bigint[] = [];
    if (claimed.length > 0) {
      // CONTRACT §3: a job becomes RUNNING when its first task is claimed.
      const jobIds = [...new Set(claimed.map((t) => t.job_id))];
      const started = await tx
        .updateTable("jobs")
        .set({ status: "RUNNING", started_at: nowMs })
        .where("id", "in", jobIds)
        .where("status", "=", "PENDING")
        .returning("id")
        .execute();
      startedJobs = started.map((j) => j.id);
    }
    return { tasks: claimed, workerStatus: worker.status, startedJobs };
  });
}
