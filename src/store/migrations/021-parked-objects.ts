// 021: the objects a running attempt replaced, kept until the attempt ends (objects/parking.ts): a
// failed attempt puts them back, a successful one drops them. In SQL rather than in the worker's
// memory, so the background process settles those of an attempt whose worker died, or whose
// replace finished after the attempt had ended (a timeout), instead of their rows being stranded.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("parked_objects")
    .addColumn("parked_table", "text", (c) => c.primaryKey())
    // The object whose rows wait in parked_table, and its registry row as it was (JSON).
    .addColumn("object_id", "bigint", (c) => c.notNull())
    .addColumn("object_row", "text", (c) => c.notNull())
    // The object that took its place, and the attempt that made it.
    .addColumn("replacement_id", "bigint", (c) => c.notNull())
    .addColumn("task_id", "bigint", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("parked_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("parked_objects_attempt").on("parked_objects").columns(["task_id", "attempt"]).execute();
  await db.schema.createIndex("parked_objects_replacement").on("parked_objects").column("replacement_id").execute();
  await db.schema.createIndex("parked_objects_object").on("parked_objects").column("object_id").execute();
}
