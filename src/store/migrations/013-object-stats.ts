// 013: an object's row count and size kept in the registry, so listing and reading objects need
// not ask the column store each time (in chDB those statements run one at a time on one session).
// Filled by the first read after the object was made or appended to; `stats_epoch` moves with
// every append, and a read stores what it measured only if no append came in between.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("data_objects").addColumn("row_count", "bigint").execute();
  await db.schema.alterTable("data_objects").addColumn("size_bytes", "bigint").execute();
  await db.schema.alterTable("data_objects").addColumn("stats_epoch", "integer", (c) => c.notNull().defaultTo(0)).execute();
}
