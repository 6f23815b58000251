// Guarded task transitions (CONTRACT §3). Every update names the states it may leave, the worker
// and the attempt, so a late report (a lost worker, a cancelled task) changes nothing.

import { sql, type UpdateQueryBuilder, type UpdateResult } from "kysely";
import { chunksOf } from "./chunks.js";
import { type Store, isPostgres } from "./db.js";
import { OPEN_JOB_STATUSES, OPEN_TASK_STATUSES } from "./statuses.js";
import type { Database, NewTaskRow } from "./schema.js";

export interface AttemptKey {
  taskId: bigint;
  workerId: bigint;
  attempt: number;
}

type TaskUpdate = UpdateQueryBuilder<Database, "tasks", "tasks", UpdateResult>;

/** The guard of every attempt transition: this task, this worker, this attempt, an allowed state. */
const guard = (q: TaskUpdate, key: AttemptKey, from: string[]) =>
  q.where("id", "=", key.taskId).where("worker_id", "=", key.workerId).where("attempt", "=", key.attempt).where("status", "in", from);

/** CLAIMED → RUNNING when the code starts; false when the task was cancelled meanwhile. */
export async function markTaskRunning(db: Store, key: AttemptKey, logPath: string, nowMs: number): Promise<boolean> {
  const result = await guard(db.updateTable("tasks").set({ status: "RUNNING", started_at: nowMs, log_path: logPath }), key, ["CLAIMED"]).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

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

/** RUNNING → COMPLETED with everything the attempt built; false when the result came too late. */
export async function completeTask(db: Store, c: Completion): Promise<{ completed: boolean; jobId?: bigint }> {
  return db.transaction().execute(async (tx) => {
    const done = await guard(
      tx.updateTable("tasks").set({ status: "COMPLETED", result_ref: c.resultJson, completed_at: c.nowMs, error: null }),
      c.key,
      ["RUNNING"],
    )
      .returning(["job_id"])
      .executeTakeFirst();
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
          await tx.insertInto("tasks").values(chunk.map((child) => ({ ...child.row, status: "CANCELLED", completed_at: c.nowMs }))).execute();
        }
      } else {
        // Children with no dependencies (a fan-out) are ready at once: many rows per statement.
        const free = c.children.filter((child) => child.dependsOn.length === 0);
        for (const chunk of chunksOf(free)) {
          await tx.insertInto("tasks").values(chunk.map((child) => ({ ...child.row, pending_deps: 0, ready_at: c.nowMs }))).execute();
        }
        for (const child of c.children) if (child.dependsOn.length > 0) await insertChild(tx, child, c.nowMs);
      }
    }

    if (c.resultReferences.length > 0) await extendDependents(tx, c.key.taskId, c.resultReferences);
    await releaseDependents(tx, c.key.taskId, c.nowMs);
    await tx.updateTable("workers").set((eb) => ({ tasks_completed: eb("tasks_completed", "+", 1) })).where("id", "=", c.key.workerId).execute();
    return { completed: true, jobId: done.job_id };
  });
}

/** Inserts a task with dependencies; ready at once when none of them is open. */
async function insertChild(tx: Store, child: NewChild, nowMs: number): Promise<void> {
  const dependsOn = [...new Set(child.dependsOn)];
  const open = await countOpen(tx, dependsOn);
  await tx
    .insertInto("tasks")
    .values({ ...child.row, pending_deps: open, ready_at: open === 0 ? nowMs : null })
    .execute();
  for (const chunk of chunksOf(dependsOn)) {
    await tx.insertInto("task_deps").values(chunk.map((d) => ({ task_id: child.row.id, depends_on_id: d }))).execute();
  }
  // A dependency that already failed, or was skipped or cancelled, skips this task at once.
  for (const chunk of chunksOf(dependsOn)) {
    const dead = await tx.selectFrom("tasks").select("id").where("id", "in", chunk).where("status", "in", ["FAILED", "SKIPPED", "CANCELLED"]).executeTakeFirst();
    if (dead) return skipTask(tx, BigInt(child.row.id), dead.id, nowMs);
  }
}

async function countOpen(tx: Store, ids: bigint[]): Promise<number> {
  let open = 0;
  for (const chunk of chunksOf(ids)) {
    const row = await tx.selectFrom("tasks").select((e) => e.fn.countAll().as("n")).where("id", "in", chunk).where("status", "!=", "COMPLETED").executeTakeFirst();
    open += Number(row?.n ?? 0);
  }
  return open;
}

/** The dependents of `taskId` also wait for the tasks its result refers to. */
async function extendDependents(tx: Store, taskId: bigint, references: bigint[]): Promise<void> {
  const dependents = await tx.selectFrom("task_deps").select("task_id").where("depends_on_id", "=", taskId).execute();
  if (dependents.length === 0) return;
  const open = await countOpen(tx, references);
  for (const { task_id } of dependents) {
    for (const chunk of chunksOf(references)) {
      await tx
        .insertInto("task_deps")
        .values(chunk.map((r) => ({ task_id, depends_on_id: r })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    if (open > 0) {
      await tx.updateTable("tasks").set((eb) => ({ pending_deps: eb("pending_deps", "+", open) })).where("id", "=", task_id).execute();
    }
  }
}

/** One dependency of each dependent completed; those with none left become ready now. */
async function releaseDependents(tx: Store, taskId: bigint, nowMs: number): Promise<void> {
  // Ids first (see claims.ts): most tasks have no dependents, and then nothing is updated at all.
  const dependents = (await tx.selectFrom("task_deps").select("task_id").where("depends_on_id", "=", taskId).execute()).map((r) => r.task_id);
  for (const chunk of chunksOf(dependents)) {
    await tx
      .updateTable("tasks")
      .set((eb) => ({
        pending_deps: eb("pending_deps", "-", 1),
        ready_at: eb.case().when("pending_deps", "=", 1).then(BigInt(nowMs)).else(eb.ref("ready_at")).end(),
      }))
      .where("id", "in", chunk)
      .where("status", "=", "PENDING")
      .execute();
  }
}

export interface Failure {
  key: AttemptKey;
  error: string;
  /** When to retry; null means the task has failed for good. */
  retryAtMs: number | null;
  nowMs: number;
}

/** A failed attempt: back to PENDING with attempt + 1, or FAILED with its dependents SKIPPED. */
export async function failAttempt(db: Store, f: Failure, allowed: string[] = ["CLAIMED", "RUNNING"]): Promise<{ failed: boolean; jobId?: bigint }> {
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
            .returning(["job_id"])
            .executeTakeFirst()
        : await guard(tx.updateTable("tasks").set({ status: "FAILED", error: f.error, completed_at: f.nowMs }), f.key, allowed)
            .returning(["job_id"])
            .executeTakeFirst();
    if (!updated) return { failed: false };
    if (f.retryAtMs === null) await skipDownstream(tx, f.key.taskId, f.nowMs);
    await tx.updateTable("workers").set((eb) => ({ tasks_failed: eb("tasks_failed", "+", 1) })).where("id", "=", f.key.workerId).execute();
    return { failed: true, jobId: updated.job_id };
  });
}

async function skipTask(tx: Store, taskId: bigint, causeId: bigint, nowMs: number): Promise<void> {
  await tx
    .updateTable("tasks")
    .set({ status: "SKIPPED", completed_at: nowMs, error: `skipped: task ${causeId} did not complete` })
    .where("id", "=", taskId)
    .where("status", "=", "PENDING")
    .execute();
  await skipDownstream(tx, taskId, nowMs);
}

/** CONTRACT §3: every task depending on `taskId`, transitively, becomes SKIPPED at once. */
export async function skipDownstream(tx: Store, taskId: bigint, nowMs: number): Promise<void> {
  await sql`
    WITH RECURSIVE downstream(id) AS (
      SELECT task_id FROM task_deps WHERE depends_on_id = ${taskId}
      UNION
      SELECT d.task_id FROM task_deps d JOIN downstream ON d.depends_on_id = downstream.id
    )
    UPDATE tasks SET status = 'SKIPPED', completed_at = ${nowMs}, error = ${`skipped: task ${taskId} did not complete`}
    WHERE id IN (SELECT id FROM downstream) AND status = 'PENDING'`.execute(tx);
}

/**
 * Ends a job whose tasks are all terminal: COMPLETED, or FAILED naming its first failed task
 * (CONTRACT §3). Guarded, so a cancelled job stays cancelled.
 */
export async function finishJobIfDone(db: Store, jobId: bigint, nowMs: number): Promise<string | null> {
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
  const skipped = failed ? undefined : await db.selectFrom("tasks").select("id").where("job_id", "=", jobId).where("status", "in", ["SKIPPED", "CANCELLED"]).limit(1).executeTakeFirst();
  const entry = await db.selectFrom("tasks").select("result_ref").where("job_id", "=", jobId).orderBy("id").limit(1).executeTakeFirst();
  const status = failed || skipped ? "FAILED" : "COMPLETED";
  const error = failed ? `task ${failed.name} (${failed.id}) failed: ${failed.error ?? "unknown error"}` : skipped ? "some tasks did not run" : null;
  const result = await db
    .updateTable("jobs")
    .set({ status, completed_at: nowMs, error, result_ref: status === "COMPLETED" ? (entry?.result_ref ?? null) : null })
    .where("id", "=", jobId)
    .where("status", "in", OPEN_JOB_STATUSES)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0 ? status : null;
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
