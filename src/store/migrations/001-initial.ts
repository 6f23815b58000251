// 001: the orchestration schema. One file for SQLite and PostgreSQL: only portable types
// (bigint, integer, text, boolean) so the same queries run on both.

import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("jobs")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("run_type", "text", (c) => c.notNull())
    .addColumn("preservation_mode", "text", (c) => c.notNull())
    .addColumn("registered_name", "text")
    .addColumn("entrypoint", "text", (c) => c.notNull())
    .addColumn("kwargs", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("result_ref", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("started_at", "bigint")
    .addColumn("completed_at", "bigint")
    .execute();
  await db.schema.createIndex("jobs_name_id").on("jobs").columns(["name", "id"]).execute();
  await db.schema.createIndex("jobs_status_id").on("jobs").columns(["status", "id"]).execute();
  await db.schema.createIndex("jobs_created_at").on("jobs").column("created_at").execute();

  await db.schema
    .createTable("tasks")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("job_id", "bigint", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    // "job" for a job's entry task (its entrypoint names the job), "task" for the tasks it schedules.
    .addColumn("kind", "text", (c) => c.notNull().defaultTo("task"))
    .addColumn("entrypoint", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("kwargs", "text", (c) => c.notNull())
    .addColumn("result_ref", "text")
    .addColumn("error", "text")
    .addColumn("log_path", "text")
    .addColumn("worker_id", "bigint")
    .addColumn("timeout_ms", "bigint")
    .addColumn("backoff_ms", "bigint", (c) => c.notNull())
    // Dependencies not yet COMPLETED; the task is ready when this reaches 0.
    .addColumn("pending_deps", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("ready_at", "bigint")
    .addColumn("retry_after", "bigint")
    .addColumn("claimed_at", "bigint")
    .addColumn("started_at", "bigint")
    .addColumn("completed_at", "bigint")
    .execute();
  await db.schema.createIndex("tasks_job_status").on("tasks").columns(["job_id", "status"]).execute();
  // Claiming seeks ready tasks in order: pending, no open dependencies, oldest readiness first.
  await db.schema.createIndex("tasks_claim").on("tasks").columns(["status", "pending_deps", "ready_at", "id"]).execute();
  await db.schema.createIndex("tasks_worker").on("tasks").columns(["worker_id", "status"]).execute();

  await db.schema
    .createTable("task_deps")
    .addColumn("task_id", "bigint", (c) => c.notNull().references("tasks.id").onDelete("cascade"))
    .addColumn("depends_on_id", "bigint", (c) => c.notNull().references("tasks.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("task_deps_pk", ["task_id", "depends_on_id"])
    .execute();
  await db.schema.createIndex("task_deps_depends_on").on("task_deps").column("depends_on_id").execute();

  await db.schema
    .createTable("workers")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("hostname", "text", (c) => c.notNull())
    .addColumn("pid", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("concurrency", "integer", (c) => c.notNull())
    .addColumn("max_tasks", "integer")
    .addColumn("started_at", "bigint", (c) => c.notNull())
    .addColumn("last_heartbeat", "bigint")
    .addColumn("stopped_at", "bigint")
    .addColumn("tasks_completed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("tasks_failed", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("workers_status").on("workers").columns(["status", "id"]).execute();

  await db.schema
    .createTable("registered_jobs")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("entrypoint", "text", (c) => c.notNull())
    .addColumn("schedule", "text")
    .addColumn("timezone", "text")
    .addColumn("enabled", "boolean", (c) => c.notNull())
    .addColumn("defaults", "text", (c) => c.notNull())
    .addColumn("preservation_mode", "text")
    .addColumn("next_run_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("users")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull().unique())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('admin', 'viewer')`))
    .addColumn("disabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("refresh_tokens")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("rotated_at", "bigint")
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("refresh_tokens_user").on("refresh_tokens").column("user_id").execute();

  // Snowflake node numbers leased by live processes (CONTRACT §2).
  await db.schema
    .createTable("node_leases")
    .addColumn("node", "integer", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();

  // Registry of data objects (CONTRACT §5); the tables themselves live in the column store.
  await db.schema
    .createTable("data_objects")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("table_name", "text", (c) => c.notNull().unique())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("job_id", "bigint")
    .addColumn("task_id", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("data_objects_name").on("data_objects").columns(["name", "id"]).execute();
  await db.schema.createIndex("data_objects_job").on("data_objects").column("job_id").execute();
}
