// 010: run limits. A task may hold a gate: "task:<key>" for a task's concurrency key (at most
// gate_limit of its tasks run at once, across every worker), or "runs:<registration>" for the entry
// task of a registration with max_active_runs (at most that many of its runs RUNNING). Gated tasks
// are claimed apart, one gate at a time under a lock on its `gates` row (claims.ts). A run has a
// priority its tasks inherit; claiming takes higher first. The claim index leads with it.

import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("tasks").addColumn("gate", "text").execute();
  await db.schema.alterTable("tasks").addColumn("gate_limit", "integer").execute();
  await db.schema.alterTable("tasks").addColumn("priority", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("jobs").addColumn("priority", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("registered_jobs").addColumn("max_active_runs", "integer").execute();
  await db.schema.alterTable("registered_jobs").addColumn("overlap", "text").execute();
  await db.schema.createTable("gates").addColumn("key", "text", (c) => c.primaryKey()).execute();
  await db.schema.dropIndex("tasks_claim").execute();
  await sql`CREATE INDEX tasks_claim ON tasks (status, pending_deps, priority DESC, ready_at, id)`.execute(db);
}
