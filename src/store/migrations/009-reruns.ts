// 009: re-runs from failure. A task's identity is its position in its job's graph (its parent's
// identity, its name, its arguments with references replaced by the referenced tasks' identities,
// and its occurrence among identical siblings), the same in every run of the same entrypoint and
// kwargs; a re-run reuses the result of the task of equal identity that completed in the run it
// re-runs (`reused_from`). A job records which run it re-runs and from where.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("tasks").addColumn("identity", "text").execute();
  await db.schema.alterTable("tasks").addColumn("reused_from", "bigint").execute();
  await db.schema.alterTable("jobs").addColumn("rerun_of", "bigint").execute();
  await db.schema.alterTable("jobs").addColumn("rerun_from", "text").execute();
}
