// 003: what Scheme B needs beyond SPEC's two tables (CONTRACT §8). A refresh token names the login
// it descends from (chain_id, the id of that login's first token) so a reused token can revoke the
// whole chain, and when it was issued. Failed logins are kept per username for throttling, in the
// SQL store so that every server behind a load balancer counts the same attempts.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("refresh_tokens").addColumn("chain_id", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("refresh_tokens").addColumn("created_at", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex("refresh_tokens_chain").on("refresh_tokens").column("chain_id").execute();

  await db.schema
    .createTable("login_failures")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("failed_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("login_failures_username").on("login_failures").columns(["username", "failed_at"]).execute();
}
