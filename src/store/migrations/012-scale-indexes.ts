// 012: indexes for large stores (issue 12 item 3, checked with EXPLAIN by bench/scale.ts). A job's
// tasks are read a page at a time in id order: (job_id, id) seeks the page instead of scanning the
// primary key. Stats sum execution times over a job's tasks: (job_id, status, started_at,
// completed_at) answers from the index alone; its entry moves at every transition anyway, since
// each transition changes status. Retention finds expired jobs by completed_at, and the scheduler
// counts a registration's open runs by (registered_name, status), without scanning every job.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("tasks_job_id").on("tasks").columns(["job_id", "id"]).execute();
  await db.schema.dropIndex("tasks_job_status").execute();
  await db.schema.createIndex("tasks_job_status").on("tasks").columns(["job_id", "status", "started_at", "completed_at"]).execute();
  await db.schema.createIndex("jobs_completed_at").on("jobs").column("completed_at").execute();
  await db.schema.createIndex("jobs_registered_status").on("jobs").columns(["registered_name", "status"]).execute();
}
