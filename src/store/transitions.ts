// Guarded task transitions (CONTRACT §3). Every update names the states it may leave, the worker
// and the attempt, so a late report (a lost worker, a cancelled task) changes nothing.

import { MAX_PENDING_NOTICES, enqueueFailureNotification } from "./failure-notifications.js";
import { type UpdateQueryBuilder, type UpdateResult, sql } from "kysely";
import { chunksOf } from "./chunks.js";
import { retryOnConflict } from "./errors.js";
import { type Store, isPostgres } from "./db.js";
import { type SkippedTask, extendDependents, insertChild, releaseDependents, skipDownstream } from "./dependencies.js";
import { OPEN_JOB_STATUSES, OPEN_TASK_STATUSES } from "../core/statuses.js";
import type { Database, JobRow, NewTaskRow } from "./schema.js";
import { prepared } from "./prepared.js";

export interface AttemptKey {
  taskId: bigint;
  workerId: bigint;
  attempt: number;
}

type TaskUpdate = UpdateQueryBuilder<Database, "tasks", "tasks", UpdateResult>;

/** The guard of every attempt transition: this task, this worker, this attempt, an allowed state. */
const guard = (q: TaskUpdate, key: AttemptKey, from: string[]) =>
  q.where("id", "=", key.taskId).where("worker_id", "=", key.workerId).where("attempt", "=", key.attempt).where("status", "in", from);

/** RUNNING → COMPLETED, guarded: the update of every completion that is not one statement on PostgreSQL. */
const completeRunning = prepared((db, v: AttemptKey & { resultJson: string; nowMs: number }) =>
  guard(db.updateTable("tasks").set({ status: "COMPLETED", result_ref: v.resultJson, completed_at: v.nowMs, error: null }), v, ["RUNNING"]).returning(["job_id"]),
);

export interface NewChild {
  row: NewTaskRow;
  dependsOn: bigint[];
}

export interface Completion {
  key: AttemptKey;
  resultJson: string;
  /** Tasks the attempt scheduled: committed only with its success. */
  children: NewChild[];
  /** Tasks referenced by the result: this task's dependents must wait for them too. */
  resultReferences: bigint[];
  nowMs: number;
}

/**
 * RUNNING → COMPLETED with everything the attempt built; false when the result came too late. The
 * worker's completed count is not touched here (it travels with the worker's heartbeats).
 */
export async function completeTask(db: Store, c: Completion): Promise<{ completed: boolean; jobId?: bigint }> {
  if (isPostgres(db) && isLeaf(c)) return completeLeafOnPostgres(db, c);
  return db.transaction().execute(async (tx) => {
    const done = await completeRunning.first(tx, leafValues(c));
    if (!done) return { completed: false };

    if (c.children.length > 0) {
      // The job row is read under FOR SHARE: a concurrent cancel_job (which updates that row first)
      // either commits before, and the children are born CANCELLED, or waits, and cancels them.
      let jobQuery = tx.selectFrom("jobs").select("status").where("id", "=", done.job_id);
      if (isPostgres(tx)) jobQuery = jobQuery.forShare();
      const job = await jobQuery.executeTakeFirst();
      const cancelled = job?.status === "CANCELLED";
      if (cancelled) {
        for (const chunk of chunksOf(c.children)) {
          await tx.insertInto("tasks").values(chunk.map((child) => Object.assign({}, child.row, { status: "CANCELLED", completed_at: c.nowMs }))).execute();
        }
      } else {
        // Children with no dependencies (a fan-out) are ready at once: many rows per statement.
        const free = c.children.filter((child) => child.dependsOn.length === 0);
        for (const chunk of chunksOf(free)) {
          await tx.insertInto("tasks").values(chunk.map((child) => Object.assign({}, child.row, { pending_deps: 0, ready_at: c.nowMs }))).execute();
        }
        for (const child of c.children) if (child.dependsOn.length > 0) await insertChild(tx, child, c.nowMs);
      }
    }

    if (c.resultReferences.length > 0) await extendDependents(tx, c.key.taskId, c.resultReferences);
    await releaseDependents(tx, c.key.taskId, c.nowMs);
    return { completed: true, jobId: done.job_id };
  });
}

/** What a completion without children or result references needs. */
export type LeafCompletion = Pick<Completion, "key" | "resultJson" | "nowMs">;

/** A completion with no children and no references in its result: one statement on PostgreSQL. */
export const isLeaf = (c: Completion): boolean => c.children.length === 0 && c.resultReferences.length === 0;

/**
 * The guarded update of a leaf completion and the release of its dependents as common table
 * expressions `done` (returning job_id) and `released` (PostgreSQL runs a data-modifying CTE to
 * completion whether or not the query reads it). The dependents are found by primary key only: with
 * `status = 'PENDING'`, which an index can serve, the planner (its statistics taken before a large
 * fan-out was inserted, so it believes PENDING tasks are few) intersected them with a scan of every
 * PENDING task in the claim index: 9,000 entries early in a 10,000-task fan-out, 0.5 ms of the
 * statement's 0.7. `IS NOT DISTINCT FROM` (the same test: status is never NULL) is not indexable.
 * The completed task itself is found the same way: with `status = 'RUNNING'` the plan could walk
 * every RUNNING entry of the claim index, dead ones included (each task leaves one there until a
 * vacuum), 0.5 ms per completion late in a large fan-out.
 */
export function leafCompletionCtes(v: LeafValues) {
  return sql`
    done AS (
      UPDATE tasks SET status = 'COMPLETED', result_ref = ${v.resultJson}, completed_at = ${v.nowMs}, error = NULL
      WHERE id = ${v.taskId} AND worker_id = ${v.workerId} AND attempt = ${v.attempt} AND status IS NOT DISTINCT FROM 'RUNNING'
      RETURNING job_id),
    released AS (
      UPDATE tasks SET pending_deps = pending_deps - 1, ready_at = CASE WHEN pending_deps = 1 THEN ${v.nowMs} ELSE ready_at END
      WHERE id = ANY (ARRAY(SELECT task_id FROM task_deps WHERE depends_on_id = ${v.taskId})) AND status IS NOT DISTINCT FROM 'PENDING' AND EXISTS (SELECT 1 FROM done))`;
}

/** A leaf completion's values as its statement binds them. */
export type LeafValues = AttemptKey & Pick<LeafCompletion, "resultJson" | "nowMs">;

/** Written out: V8 builds `{ ...c.key, more }` through a slow path (microseconds per task). */
const leafValues = (c: Completion): LeafValues => ({ taskId: c.key.taskId, workerId: c.key.workerId, attempt: c.key.attempt, resultJson: c.resultJson, nowMs: c.nowMs });

const completeLeaf = prepared((_db, v: LeafValues) => sql<{ job_id: bigint }>`WITH ${leafCompletionCtes(v)} SELECT job_id FROM done`);

/** The common completion as one statement, one round trip instead of a transaction's five. */
async function completeLeafOnPostgres(db: Store, c: Completion): Promise<{ completed: boolean; jobId?: bigint }> {
  const row = await completeLeaf.first(db, leafValues(c));
  return row ? { completed: true, jobId: row.job_id } : { completed: false };
}

export interface Failure {
  key: AttemptKey;
  error: string;
  /** When to retry; null means the task has failed for good. */
  retryAtMs: number | null;
  nowMs: number;
}

/** A failed attempt: back to PENDING with attempt + 1, or FAILED with its dependents SKIPPED. */
export async function failAttempt(db: Store, failure: Failure, allowed: string[] = ["CLAIMED", "RUNNING"]): Promise<{ failed: boolean; jobId?: bigint; skipped?: SkippedTask[] }> {
  // The error is task code's text: PostgreSQL refuses a NUL in a text column, and the failure then
  // went unrecorded (the task stayed RUNNING, its job never ended). It is stored as U+FFFD.
  const f = { ...failure, error: failure.error.replaceAll("\0", "\uFFFD") };
  return db.transaction().execute(async (tx) => {
    const updated =
      f.retryAtMs !== null
        ? await guard(
            tx.updateTable("tasks").set((eb) => ({
              status: "PENDING",
              attempt: eb("attempt", "+", 1),
              worker_id: null,
              error: f.error,
              retry_after: f.retryAtMs,
              ready_at: f.retryAtMs,
              claimed_at: null,
            })),
            f.key,
            allowed,
          )
            .returning(["job_id", "started_at", "log_path"])
            .executeTakeFirst()
        : await guard(tx.updateTable("tasks").set({ status: "FAILED", error: f.error, completed_at: f.nowMs }), f.key, allowed)
            .returning(["job_id", "started_at", "log_path"])
            .executeTakeFirst();
    if (!updated) return { failed: false };
    // A retried attempt leaves the task row, which the next attempt takes over: it is kept for the
    // job's timeline of attempts. (A final failure stays on the row, as the task's latest attempt.)
    if (f.retryAtMs !== null) {
      await tx
        .insertInto("task_attempts")
        .values({ task_id: f.key.taskId, attempt: f.key.attempt, job_id: updated.job_id, worker_id: f.key.workerId, started_at: updated.started_at, ended_at: f.nowMs, log_path: updated.log_path, error: f.error })
        .execute();
    }
    const skipped = f.retryAtMs === null ? await skipDownstream(tx, f.key.taskId, f.nowMs) : [];
    // The worker's failed count is not touched here (see AttemptCounts in workers.ts).
    return { failed: true, jobId: updated.job_id, skipped };
  });
}

/**
 * RUNNING → PENDING for a claim whose worker never learnt of it (the claim committed, its answer
 * was lost with the connection): no attempt ran, so none is counted. The task is as it was before
 * the claim: its attempt number, and the start and log of the attempt before, which task_attempts
 * kept (none for a first attempt). Guarded by the claim's own instant too: a later claim of the
 * task, by this worker with the same attempt number, is not that claim.
 */
export async function returnUnstartedClaim(db: Store, key: AttemptKey, claimedAt: bigint): Promise<boolean> {
  const updated = await guard(
    db.updateTable("tasks").set((eb) => {
      const before = eb.selectFrom("task_attempts").where("task_id", "=", key.taskId).where("attempt", "=", key.attempt - 1);
      return { status: "PENDING", worker_id: null, claimed_at: null, started_at: before.select("started_at"), log_path: before.select("log_path") };
    }),
    key,
    ["RUNNING"],
  )
    .where("claimed_at", "=", claimedAt)
    .returning(["id"])
    .executeTakeFirst();
  return updated !== undefined;
}

/**
 * cancel_job: PENDING/RUNNING → CANCELLED for the job and every task not yet terminal; undefined
 * when the job had already ended. Completions read the job row FOR SHARE before inserting
 * children, so none is born after the job row is CANCELLED.
 *
 * On PostgreSQL the tasks are not all locked in one update. A completion that claims its slot's
 * next task holds two of the job's tasks while it runs, locked in its own order; an update of
 * every open task waits for one of them while holding hundreds, and during a fan-out on four
 * slots it deadlocked at every try. So the job row and the tasks nobody holds are cancelled in one
 * transaction, and the tasks held then (a completing task, a task being claimed) are cancelled as
 * soon as their statement lets go: a claimed one is then RUNNING, and its worker's revocation
 * check stops it. The call returns when no task of the job is open.
 */
/** A task a cancel ended, for the change feed. */
export interface CancelledTask {
  id: bigint;
  attempt: number;
}

/** The job CANCELLED with every open task; the tasks it ended, so their ends can be published. */
export async function cancelJobAndTasks(db: Store, jobId: bigint, nowMs: number): Promise<{ job: JobRow; tasks: CancelledTask[] } | undefined> {
  const cancelled = await retryOnConflict(() =>
    db.transaction().execute(async (tx) => {
      const job = await tx
        .updateTable("jobs")
        .set({ status: "CANCELLED", completed_at: nowMs, error: "cancelled" })
        .where("id", "=", jobId)
        .where("status", "in", OPEN_JOB_STATUSES)
        // A job whose tasks have all ended is over, only not yet marked (its worker ends it at its
        // next claim, or within 20 ms): cancelling it would drop a finished job's result.
        .where((eb) => eb.exists(eb.selectFrom("tasks").select("id").where("job_id", "=", jobId).where("status", "in", OPEN_TASK_STATUSES)))
        .returningAll()
        .executeTakeFirst();
      if (!job) return undefined;
      const tasks = isPostgres(tx) ? await cancelUnheldTasks(tx, jobId, nowMs) : await cancelOpenTasks(tx, jobId, nowMs);
      return { job, tasks };
    }),
  );
  if (cancelled && isPostgres(db)) cancelled.tasks.push(...(await cancelHeldTasks(db, jobId, nowMs)));
  return cancelled;
}

const cancelledTask = (row: { id: bigint; attempt: number | bigint }): CancelledTask => ({ id: row.id, attempt: Number(row.attempt) });

/**
 * Every open task of the job CANCELLED, waiting for the locks of those another statement holds. A
 * task waiting to retry keeps its last error but no longer a retry time: none will come.
 */
async function cancelOpenTasks(db: Store, jobId: bigint, nowMs: number): Promise<CancelledTask[]> {
  const rows = await db
    .updateTable("tasks")
    .set({ status: "CANCELLED", completed_at: nowMs, retry_after: null })
    .where("job_id", "=", jobId)
    .where("status", "in", OPEN_TASK_STATUSES)
    .returning(["id", "attempt"])
    .execute();
  return rows.map(cancelledTask);
}

/** How long held tasks are waited for without waiting on their locks, before an ordinary update. */
const HELD_TASKS_PATIENCE_MS = 5_000;

/** The job's open tasks that no other statement holds now, CANCELLED. */
async function cancelUnheldTasks(db: Store, jobId: bigint, nowMs: number): Promise<CancelledTask[]> {
  const { rows } = await sql<{ id: bigint; attempt: number | bigint }>`
    UPDATE tasks SET status = 'CANCELLED', completed_at = ${nowMs}, retry_after = NULL
    WHERE id IN (SELECT id FROM tasks WHERE job_id = ${jobId} AND status IN (${sql.join([...OPEN_TASK_STATUSES])}) FOR UPDATE SKIP LOCKED)
    RETURNING id, attempt`.execute(db);
  return rows.map(cancelledTask);
}

/** After the job row is CANCELLED: the tasks other statements held, as they let go. */
async function cancelHeldTasks(db: Store, jobId: bigint, nowMs: number): Promise<CancelledTask[]> {
  const deadline = Date.now() + HELD_TASKS_PATIENCE_MS;
  const ended: CancelledTask[] = [];
  const open = () => db.selectFrom("tasks").select("id").where("job_id", "=", jobId).where("status", "in", OPEN_TASK_STATUSES).limit(1).executeTakeFirst();
  while (await open()) {
    if (Date.now() > deadline) {
      // Still held: wait on the locks, as one ordinary update (few rows are left to deadlock on).
      ended.push(...(await retryOnConflict(() => cancelOpenTasks(db, jobId, nowMs))));
      return ended;
    }
    const now = await cancelUnheldTasks(db, jobId, nowMs);
    ended.push(...now);
    if (now.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return ended;
}

/**
 * Ends a job whose tasks are all terminal: COMPLETED, or FAILED naming its first failed task
 * (CONTRACT §3). Guarded, so a cancelled job stays cancelled.
 */
export async function finishJobIfDone(db: Store, jobId: bigint, nowMs: number): Promise<{ status: string; error: string | null; notice?: "queued" | "none" | "full" } | null> {
  const open = await db
    .selectFrom("tasks")
    .select("id")
    .where("job_id", "=", jobId)
    .where("status", "in", OPEN_TASK_STATUSES)
    .limit(1)
    .executeTakeFirst();
  if (open) return null;
  const failed = await db
    .selectFrom("tasks")
    .select(["id", "name", "error"])
    .where("job_id", "=", jobId)
    .where("status", "=", "FAILED")
    .orderBy("completed_at")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  const skipped = failed
    ? undefined
    : await db.selectFrom("tasks").select(["id", "name", "status", "error"]).where("job_id", "=", jobId).where("status", "in", ["SKIPPED", "CANCELLED"]).orderBy("id").limit(1).executeTakeFirst();
  const entry = await db.selectFrom("tasks").select("result_ref").where("job_id", "=", jobId).orderBy("id").limit(1).executeTakeFirst();
  const status = failed || skipped ? "FAILED" : "COMPLETED";
  // No task of its own failed: one was skipped for a dependency of another job's (a reference it
  // was given), or cancelled. The job's error names it and why.
  const error = failed
    ? `task ${failed.name} (${failed.id}) failed: ${failed.error ?? "unknown error"}`
    : skipped
      ? `task ${skipped.name} (${skipped.id}) did not run (${skipped.status}): ${skipped.error ?? "no reason recorded"}`
      : null;
  const end = (tx: Store) =>
    tx
      .updateTable("jobs")
      .set({ status, completed_at: nowMs, error, result_ref: status === "COMPLETED" ? (entry?.result_ref ?? null) : null })
      .where("id", "=", jobId)
      .where("status", "in", OPEN_JOB_STATUSES)
      .executeTakeFirst();
  if (status === "COMPLETED") return Number((await end(db)).numUpdatedRows) > 0 ? { status, error } : null;
  // A failure and the notice its registration's webhook is owed commit together.
  return db.transaction().execute(async (tx) => {
    if (Number((await end(tx)).numUpdatedRows) === 0) return null;
    return { status, error, notice: await enqueueFailureNotification(tx, jobId, nowMs, MAX_PENDING_NOTICES) };
  });
}

/** Task ids among `ids` that this worker should no longer be running (cancelled, reassigned). */
export async function findRevokedTasks(db: Store, workerId: bigint, running: { id: bigint; attempt: number }[]): Promise<Set<bigint>> {
  if (running.length === 0) return new Set();
  const rows = await db.selectFrom("tasks").select(["id", "status", "worker_id", "attempt"]).where("id", "in", running.map((r) => r.id)).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const revoked = new Set<bigint>();
  for (const r of running) {
    const row = byId.get(r.id);
    if (!row || (row.status !== "RUNNING" && row.status !== "CLAIMED") || row.worker_id !== workerId || Number(row.attempt) !== r.attempt) revoked.add(r.id);
  }
  return revoked;
}
