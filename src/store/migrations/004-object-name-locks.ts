// 004: leases on object table names (issue: data correctness, overlapping replace). Whoever builds
// or replaces a job or global object holds its table name's row until the new table is in place
// and registered, so two replacements of one name run one after the other, on every backend and
// across processes. A lease expires, so a holder killed mid-build blocks the name for at most a TTL.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("object_name_locks")
    .addColumn("table_name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
}
