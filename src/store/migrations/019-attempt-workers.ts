// 019: retention keeps a worker's row while a kept task or earlier attempt names it (the host a
// log is on, the worker a task page links to); this index finds the attempts that name a worker.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("task_attempts_worker").on("task_attempts").column("worker_id").execute();
}
