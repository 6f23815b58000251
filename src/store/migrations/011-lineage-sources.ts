// 011: lineage that outlives cleanup. `dropped_objects` keeps the registry row of every dropped
// object (a temp at its job's end, a replaced or deleted object), so the operation log's nodes keep
// their table, scope and job after the table is gone; `object_sources` records the external inputs
// of a load: the file or URL, its size, its format and when it was read.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("dropped_objects")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("table_name", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("job_id", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("dropped_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("dropped_objects_job").on("dropped_objects").column("job_id").execute();

  await db.schema
    .createTable("object_sources")
    .addColumn("op_id", "bigint", (c) => c.notNull())
    .addColumn("object_id", "bigint", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("location", "text", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint")
    .addColumn("loaded_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("object_sources_object").on("object_sources").column("object_id").execute();
}
