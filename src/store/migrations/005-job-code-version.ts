// 005: the version of a job's code (a hash of its module and the local files it imports) as the
// run started with it (issue: data correctness, edited job files), shown in JobDetail, and copied
// to each of its tasks so a worker on any machine can tell that the module it holds is not it.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("code_version", "text").execute();
  await db.schema.alterTable("tasks").addColumn("code_version", "text").execute();
}
