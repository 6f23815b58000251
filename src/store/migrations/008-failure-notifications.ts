// 008: failure notifications. A registration may name a webhook (`on_failure`) that is told when
// one of its runs fails; the notice waits in an outbox table, written in the transaction that
// fails the job, until the background process delivers it (with retries, see
// engine/failure-notifications.ts). One notice per job: a job fails once.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("registered_jobs").addColumn("on_failure", "text").execute();
  await db.schema
    .createTable("failure_notifications")
    .addColumn("job_id", "bigint", (c) => c.primaryKey())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("failure_notifications_due").on("failure_notifications").column("next_attempt_at").execute();
}
