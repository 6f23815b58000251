// The attempts of a job's tasks before their latest (migration 017): a page at a time, in task order.

import { MAX_ID } from "../core/ids.js";
import { decodeCursor, pageOf } from "./paging.js";
import type { Store } from "./db.js";
import type { TaskAttemptRow } from "./schema.js";

export type EarlierAttemptRow = TaskAttemptRow & { task_name: string };

/** The cursor's key: the last attempt's task id and number, "<task_id>.<attempt>". */
function decodeAttemptCursor(cursor: string): { taskId: bigint; attempt: number } {
  const key = decodeCursor(cursor, (k) => /^\d{1,19}\.\d{1,9}$/.test(k) && BigInt(k.split(".")[0]!) <= MAX_ID);
  const [taskId, attempt] = key.split(".");
  return { taskId: BigInt(taskId!), attempt: Number(attempt) };
}

/** One page of the job's earlier attempts, ordered by task and attempt, with how many there are in all. */
export async function pageAttemptsOfJob(db: Store, jobId: bigint, limit: number, cursor?: string): Promise<{ rows: EarlierAttemptRow[]; total: number; nextCursor: string | null }> {
  const after = cursor === undefined ? undefined : decodeAttemptCursor(cursor);
  let page = db
    .selectFrom("task_attempts as a")
    .innerJoin("tasks as t", "t.id", "a.task_id")
    .select(["a.task_id", "a.attempt", "a.job_id", "a.worker_id", "a.started_at", "a.ended_at", "a.log_path", "a.error", "t.name as task_name"])
    .where("a.job_id", "=", jobId);
  if (after) page = page.where((eb) => eb.or([eb("a.task_id", ">", after.taskId), eb.and([eb("a.task_id", "=", after.taskId), eb("a.attempt", ">", after.attempt)])]));
  const [rows, counted] = await Promise.all([
    page.orderBy("a.task_id").orderBy("a.attempt").limit(limit + 1).execute(),
    db.selectFrom("task_attempts").select((eb) => eb.fn.countAll<string>().as("n")).where("job_id", "=", jobId).executeTakeFirst(),
  ]);
  const { rows: shown, nextCursor } = pageOf(rows, limit, (row) => `${row.task_id}.${Number(row.attempt)}`);
  return { rows: shown, total: Number(counted?.n ?? 0), nextCursor };
}

/** Where an earlier attempt logged and which worker ran it, as kept when it was retried (undefined when not kept). */
export async function findEarlierAttempt(db: Store, taskId: bigint, attempt: number): Promise<Pick<TaskAttemptRow, "log_path" | "worker_id"> | undefined> {
  return db.selectFrom("task_attempts").select(["log_path", "worker_id"]).where("task_id", "=", taskId).where("attempt", "=", attempt).executeTakeFirst();
}
