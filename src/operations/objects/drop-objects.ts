// Dropping objects from operations: the table first, then its registry row (a guarded delete, so
// a racing delete of the same object reports "not found" instead of a false success).

import { conflict } from "../../core/errors.js";
import { OPEN_JOB_STATUSES } from "../../core/statuses.js";
import type { ColumnStore } from "../../data/client.js";
import { dropObject, withNameLease } from "../../objects/object-registry.js";
import type { OperationContext } from "../context.js";
import type { Store } from "../../store/db.js";
import type { DataObjectRow } from "../../store/schema.js";

/** How long a delete or purge waits for a build of the same name to finish before 409 name_busy. */
const BUILD_WAIT_MS = 10_000;

/**
 * Drops the object `find` names (it refuses or passes over one a running job still needs), holding
 * its name's lease (what makeObject holds while it builds and swaps a replacement in): a drop that
 * landed between a replacement's look-up and its swap failed the replacing task on a missing
 * table, or dropped the new table under the old row, which left the registry naming a table that
 * no longer existed. `find` runs inside the lease, so what is dropped is what the name means once
 * the build is done; undefined when it is gone by then.
 * A temp object's table is named after its own id: nothing else builds it.
 */
export async function dropUnderLease(
  ctx: Pick<OperationContext, "db" | "ids" | "clock">,
  columns: ColumnStore,
  row: DataObjectRow,
  find: () => Promise<DataObjectRow | undefined>,
): Promise<DataObjectRow | undefined> {
  const drop = async () => {
    const current = await find();
    if (!current) return undefined;
    // A job-scoped name means its newest run's object, which may be another table by now.
    if (current.table_name !== row.table_name) throw conflict(`data object "${row.name}" now names another object (a newer run made it): try again`, "name_busy");
    return (await dropObject(ctx.db, columns, current)) ? current : undefined;
  };
  return row.scope === "temp" ? drop() : withNameLease(ctx, row.table_name, drop, BUILD_WAIT_MS);
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
