// 006: the JSON Schema of a registered job's kwargs, taken from the job's own schema when it is
// registered, so clients (the web app's run-now editor, agents) know the arguments without loading
// the module.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("registered_jobs").addColumn("kwargs_schema", "text").execute();
}
