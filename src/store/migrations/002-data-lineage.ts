// 002: the data plane's bookkeeping: how derived objects are read back (their sort), the operation
// log (which operation, SQL, job, task and attempt made an object), object-level and column-level
// lineage edges.

import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("data_objects").addColumn("sort_sql", "text").execute();

  await db.schema
    .createTable("object_ops")
    .addColumn("id", "bigint", (c) => c.primaryKey())
    .addColumn("object_id", "bigint", (c) => c.notNull())
    .addColumn("object_name", "text", (c) => c.notNull())
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("sql_text", "text", (c) => c.notNull())
    .addColumn("job_id", "bigint")
    .addColumn("task_id", "bigint")
    .addColumn("attempt", "integer")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("object_ops_object").on("object_ops").columns(["object_id", "id"]).execute();

  // Direct object-to-object edges; names are kept so lineage still reads after an input is deleted.
  await db.schema
    .createTable("object_inputs")
    .addColumn("op_id", "bigint", (c) => c.notNull())
    .addColumn("object_id", "bigint", (c) => c.notNull())
    .addColumn("object_name", "text", (c) => c.notNull())
    .addColumn("input_id", "bigint", (c) => c.notNull())
    .addColumn("input_name", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("object_inputs_object").on("object_inputs").column("object_id").execute();
  await db.schema.createIndex("object_inputs_input").on("object_inputs").column("input_id").execute();

  await db.schema
    .createTable("column_lineage")
    .addColumn("object_id", "bigint", (c) => c.notNull())
    .addColumn("column_name", "text", (c) => c.notNull())
    .addColumn("input_id", "bigint", (c) => c.notNull())
    .addColumn("input_name", "text", (c) => c.notNull())
    .addColumn("input_column", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("column_lineage_object").on("column_lineage").column("object_id").execute();
}
