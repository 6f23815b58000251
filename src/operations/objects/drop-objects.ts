// Dropping objects from operations: the table first, then its registry row (a guarded delete, so
// a racing delete of the same object reports "not found" instead of a false success).

import { conflict, notFound } from "../../core/errors.js";
import { OPEN_JOB_STATUSES } from "../../core/statuses.js";
import type { ColumnStore } from "../../data/client.js";
import { dropObject } from "../../objects/object-registry.js";
import type { Store } from "../../store/db.js";
import type { DataObjectRow } from "../../store/schema.js";

export async function dropObjectOrFail(db: Store, columns: ColumnStore, row: DataObjectRow): Promise<void> {
  if (!(await dropObject(db, columns, row))) throw notFound(`data object "${row.name}" was deleted meanwhile`);
}

/**
 * A temp object of a job that still runs is its tasks' working data: dropping it failed the task
 * reading it with ClickHouse's "unknown table". It goes when the job no longer needs it (NONE) or
 * at the job's retention.
 */
export async function inUseByRunningJob(db: Store, row: DataObjectRow): Promise<boolean> {
  if (row.scope !== "temp" || row.job_id === null) return false;
  const job = await db.selectFrom("jobs").select("status").where("id", "=", row.job_id).executeTakeFirst();
  return job !== undefined && OPEN_JOB_STATUSES.includes(job.status as never);
}

export const tempInUse = (row: DataObjectRow) =>
  conflict(`data object "${row.name}" is a temp object of job ${row.job_id}, which is still running: it is dropped when the job no longer needs it, or with the job`, "object_in_use");
