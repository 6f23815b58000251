// The tasks and task_deps tables: inserts, lookups and bulk guarded status changes.

import type { NewTaskRow, TaskRow } from "./schema.js";
import type { Store } from "./db.js";


/** A task with no dependencies (a job's entry task); tasks with some go through dependencies.ts. */
export async function insertTask(db: Store, row: NewTaskRow): Promise<void> {
  await db.insertInto("tasks").values(row).execute();
}

export async function findTaskById(db: Store, id: bigint): Promise<TaskRow | undefined> {
  return db.selectFrom("tasks").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listTasksOfJob(db: Store, jobId: bigint): Promise<TaskRow[]> {
  return db.selectFrom("tasks").selectAll().where("job_id", "=", jobId).orderBy("id", "asc").execute();
}

export async function listDependencies(db: Store, taskId: bigint): Promise<bigint[]> {
  const rows = await db.selectFrom("task_deps").select("depends_on_id").where("task_id", "=", taskId).orderBy("depends_on_id").execute();
  return rows.map((r) => r.depends_on_id);
}

/** Every dependency edge among a job's tasks, as (task, the task it waits for) pairs. */
export async function listDependenciesOfJob(db: Store, jobId: bigint): Promise<{ task_id: bigint; depends_on_id: bigint }[]> {
  return db
    .selectFrom("task_deps")
    .innerJoin("tasks", "tasks.id", "task_deps.task_id")
    .select(["task_deps.task_id", "task_deps.depends_on_id"])
    .where("tasks.job_id", "=", jobId)
    .execute();
}

/** Tasks a worker holds (claimed or running). */
export async function listTasksHeldBy(db: Store, workerId: bigint): Promise<TaskRow[]> {
  return db.selectFrom("tasks").selectAll().where("worker_id", "=", workerId).where("status", "in", ["CLAIMED", "RUNNING"]).execute();
}
