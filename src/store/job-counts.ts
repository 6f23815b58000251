// How many jobs each status holds, kept by triggers on the jobs table (migrations/015-job-counts):
// a job list's exact total without counting the table, when the list is unfiltered or filtered by
// status alone.

import type { Kysely } from "kysely";
import { sql } from "kysely";
import { JOB_STATUSES } from "../core/statuses.js";
import type { Store } from "./db.js";
import { isPostgres } from "./db.js";

/** The job_counts column of a status (`PENDING` → `pending`). */
export const statusColumn = (status: string): string => status.toLowerCase();

/** Jobs of one status, or of every status, summed over the shards. */
export async function countJobs(db: Store, status?: string): Promise<number> {
  const statuses = status === undefined ? JOB_STATUSES : JOB_STATUSES.filter((s) => s === status);
  if (statuses.length === 0) return 0;
  const sum = sql.join(statuses.map((s) => sql`coalesce(sum(${sql.ref(statusColumn(s))}), 0)`), sql` + `);
  const { rows } = await sql<{ count: unknown }>`SELECT ${sum} AS count FROM job_counts`.execute(db);
  return Number(rows[0]?.count ?? 0);
}

/**
 * Rebuilds the counts from the jobs table: for the migration that makes them, and after a load
 * that bypassed the row triggers (TRUNCATE, a bulk load with triggers disabled). On PostgreSQL the
 * table is locked against job changes meanwhile.
 */
export async function recountJobs<DB>(db: Kysely<DB>): Promise<void> {
  const recount = async (tx: Kysely<DB>) => {
    if (isPostgres(tx)) await sql`LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE`.execute(tx);
    const zero = sql.join(JOB_STATUSES.map((s) => sql`${sql.ref(statusColumn(s))} = 0`));
    await sql`UPDATE job_counts SET ${zero} WHERE shard <> 0`.execute(tx);
    const counted = sql.join(JOB_STATUSES.map((s) => sql`${sql.ref(statusColumn(s))} = (SELECT count(*) FROM jobs WHERE status = ${sql.lit(s)})`));
    await sql`UPDATE job_counts SET ${counted} WHERE shard = 0`.execute(tx);
  };
  // Inside the migration's transaction already, or one of its own.
  if (db.isTransaction) await recount(db);
  else await db.transaction().execute(recount);
}
