// How many jobs each status holds, kept by triggers on the jobs table (migrations/015-job-counts):
// a job list's exact total without counting the table, when the list is unfiltered or filtered by
// status alone.

import type { Kysely } from "kysely";
import { sql } from "kysely";
import { JOB_STATUSES, type JobStatusName } from "../core/statuses.js";
import type { Store } from "./db.js";
import { isPostgres } from "./db.js";
import { prepared } from "./prepared.js";

/** The job_counts column of a status (`PENDING` → `pending`). */
export const statusColumn = (status: string): string => status.toLowerCase();

/** Jobs by status, summed over the shards: one statement over a few rows. */
export async function jobCountsByStatus(db: Store): Promise<Record<JobStatusName, number>> {
  const row = await countsByStatus.first(db, {});
  return Object.fromEntries(JOB_STATUSES.map((s) => [s, Number(row?.[statusColumn(s)] ?? 0)])) as Record<JobStatusName, number>;
}

const countsByStatus = prepared(() => {
  const sums = sql.join(JOB_STATUSES.map((s) => sql`coalesce(sum(${sql.ref(statusColumn(s))}), 0) AS ${sql.ref(statusColumn(s))}`));
  return sql<Record<string, unknown>>`SELECT ${sums} FROM job_counts`;
});

/** Jobs of one status, or of every status. */
export async function countJobs(db: Store, status?: string): Promise<number> {
  const counts = await jobCountsByStatus(db);
  if (status === undefined) return Object.values(counts).reduce((a, b) => a + b, 0);
  return JOB_STATUSES.includes(status as JobStatusName) ? counts[status as JobStatusName] : 0;
}

/**
 * Rebuilds the counts from the jobs table: for the migration that makes them, and after a load
 * that bypassed the row triggers (TRUNCATE, a bulk load with triggers disabled). On PostgreSQL the
 * table is locked against job changes meanwhile.
 *
 * A bulk load should bypass them: on PostgreSQL every changed job updates its transaction's counter
 * row, and each update within one transaction walks the chain of that row's earlier versions, so
 * changing n jobs in one transaction costs n² steps. The service changes a job or a claim's few at a
 * time; a million at once (bench/scale.ts) disables the triggers and recounts.
 *
 * Inside a caller's transaction it must come before any job change of that transaction: on
 * PostgreSQL the triggers of earlier changes fire at commit, after the recount, and would count them
 * twice.
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
