// Dependency counters (CONTRACT §3 readiness): a task waits on `pending_deps`, the number of its
// dependencies not yet COMPLETED; completing a task releases its dependents, and a dependency that
// can never complete skips them. Called inside the transitions' transactions.

import { sql } from "kysely";
import { statusGuard } from "./by-id.js";
import { chunksOf } from "./chunks.js";
import type { Store } from "./db.js";
import { prepared } from "./prepared.js";
import type { NewChild } from "./transitions.js";

/** Inserts a task with dependencies; ready at once when none of them is open. */
export async function insertChild(tx: Store, child: NewChild, nowMs: number): Promise<void> {
  const dependsOn = [...new Set(child.dependsOn)];
  const open = await countOpen(tx, dependsOn);
  await tx
    .insertInto("tasks")
    .values(Object.assign({}, child.row, { pending_deps: open, ready_at: open === 0 ? nowMs : null }))
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

/** Which of `ids` name no task. */
export async function missingTasks(db: Store, ids: bigint[]): Promise<bigint[]> {
  const found = new Set<bigint>();
  for (const chunk of chunksOf(ids)) {
    for (const { id } of await db.selectFrom("tasks").select("id").where("id", "in", chunk).execute()) found.add(BigInt(id));
  }
  return ids.filter((id) => !found.has(id));
}

/** How many of `ids` are not COMPLETED yet. */
async function countOpen(tx: Store, ids: bigint[]): Promise<number> {
  let open = 0;
  for (const chunk of chunksOf(ids)) {
    const row = await tx.selectFrom("tasks").select((e) => e.fn.countAll().as("n")).where("id", "in", chunk).where("status", "!=", "COMPLETED").executeTakeFirst();
    open += Number(row?.n ?? 0);
  }
  return open;
}

/** The dependents of `taskId` also wait for the tasks its result refers to. */
export async function extendDependents(tx: Store, taskId: bigint, references: bigint[]): Promise<void> {
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

const dependentsOf = prepared((db, v: { taskId: bigint }) => db.selectFrom("task_deps").select("task_id").where("depends_on_id", "=", v.taskId));

/** One dependency of each dependent completed; those with none left become ready now. */
export async function releaseDependents(tx: Store, taskId: bigint, nowMs: number): Promise<void> {
  // Ids first (see claims.ts): most tasks have no dependents, and then nothing is updated at all.
  const dependents = (await dependentsOf.rows(tx, { taskId })).map((r) => r.task_id);
  for (const chunk of chunksOf(dependents)) {
    await tx
      .updateTable("tasks")
      .set((eb) => ({
        pending_deps: eb("pending_deps", "-", 1),
        ready_at: eb.case().when("pending_deps", "=", 1).then(BigInt(nowMs)).else(eb.ref("ready_at")).end(),
      }))
      .where("id", "in", chunk)
      .where(statusGuard(tx, "PENDING"))
      .execute();
  }
}

/** PENDING → SKIPPED because `causeId` will never complete, with everything downstream of it. */
export async function skipTask(tx: Store, taskId: bigint, causeId: bigint, nowMs: number): Promise<void> {
  await tx
    .updateTable("tasks")
    .set({ status: "SKIPPED", completed_at: nowMs, error: `skipped: task ${causeId} did not complete` })
    .where("id", "=", taskId)
    .where("status", "=", "PENDING")
    .execute();
  await skipDownstream(tx, taskId, nowMs);
}

/** A task a failure skipped, for its change to be published. */
export interface SkippedTask {
  id: bigint;
  attempt: number;
}

/**
 * CONTRACT §3: every task depending on `taskId`, transitively, becomes SKIPPED at once. The
 * dependents are found by primary key only (`IS NOT DISTINCT FROM` is the same test as `=` on a
 * column that is never NULL, but no index serves it), never by walking the PENDING tasks.
 */
export async function skipDownstream(tx: Store, taskId: bigint, nowMs: number): Promise<SkippedTask[]> {
  const { rows } = await sql<{ id: bigint; attempt: bigint | number }>`
    WITH RECURSIVE downstream(id) AS (
      SELECT task_id FROM task_deps WHERE depends_on_id = ${taskId}
      UNION
      SELECT d.task_id FROM task_deps d JOIN downstream ON d.depends_on_id = downstream.id
    )
    UPDATE tasks SET status = 'SKIPPED', completed_at = ${nowMs}, error = ${`skipped: task ${taskId} did not complete`}
    WHERE id IN (SELECT id FROM downstream) AND status IS NOT DISTINCT FROM 'PENDING'
    RETURNING id, attempt`.execute(tx);
  return rows.map((r) => ({ id: BigInt(r.id), attempt: Number(r.attempt) }));
}
