// 018: the jobs this deployment deleted (retention, delete_job), kept for a while after the job row
// is gone: each worker removes those jobs' task logs from its own disk (engine/log-sweep.ts), and
// only those. A folder named like a job id that no tombstone names (another deployment's, an
// operator's) is never this sweep's to remove.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("deleted_jobs")
    .addColumn("job_id", "bigint", (c) => c.primaryKey())
    .addColumn("deleted_at", "bigint", (c) => c.notNull())
    .execute();
  // Retention's pruning of old tombstones.
  await db.schema.createIndex("deleted_jobs_at").on("deleted_jobs").column("deleted_at").execute();
}
