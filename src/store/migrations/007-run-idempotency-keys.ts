// 007: idempotency keys of run_job. A key names the job its first use started, for a window: a
// retried request with the same key gets that job instead of a second run. `fingerprint` is a hash
// of the request, so a key reused for a different request is refused rather than misapplied.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("run_idempotency_keys")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("job_id", "bigint", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("run_idempotency_keys_created_at").on("run_idempotency_keys").column("created_at").execute();
}
