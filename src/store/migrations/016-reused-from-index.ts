// 016: the tasks that reused another task's result, found by the task they reused. Retention asks
// it of every job it deletes: a later run's reused task may still name that job's temp objects,
// which then go to the later run instead of being dropped. Partial: only reused tasks have an
// entry, so the engine's inserts and status changes of every other task pay nothing for it.

import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("tasks_reused_from").on("tasks").column("reused_from").where(sql.ref("reused_from"), "is not", null).execute();
}
