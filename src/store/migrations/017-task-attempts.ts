// 017: the attempts of a task before its latest, for the job view's timeline of attempts (CONTRACT
// §11). A task row holds its latest attempt only; an attempt that failed and was retried is kept
// here, written in the transaction that fails it. A task that succeeds at its first try (the
// engine's common path) writes nothing here.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("task_attempts")
    .addColumn("task_id", "bigint", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("job_id", "bigint", (c) => c.notNull())
    .addColumn("worker_id", "bigint")
    .addColumn("started_at", "bigint")
    .addColumn("ended_at", "bigint", (c) => c.notNull())
    .addColumn("log_path", "text")
    .addColumn("error", "text")
    .addPrimaryKeyConstraint("task_attempts_pk", ["task_id", "attempt"])
    .execute();
  // A job's attempts in task order: its timeline's page, and retention's deletion.
  await db.schema.createIndex("task_attempts_job").on("task_attempts").columns(["job_id", "task_id", "attempt"]).execute();
}
