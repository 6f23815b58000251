// 015: how many jobs each status holds, kept by triggers, so a job list's exact `total` (CONTRACT:
// every job matching the filter) needs no count of the jobs table when the list is unfiltered or
// filtered by status alone. Counting 1,000,000 jobs took PostgreSQL about 45 ms even index-only
// (bench/scale.ts), and a polling dashboard asks for it every 2 s.
//
// One row per shard, one column per status, so a transaction changes one row however many jobs it
// touches. On PostgreSQL the triggers are deferred to commit and pick the shard from the backend's
// pid: a transaction takes a single counter row's lock as its last act and waits for nothing while
// holding it, so counting adds no deadlock and no hot row shared by every connection. SQLite has one
// writer, so one shard and immediate triggers. TRUNCATE fires no row triggers, and a bulk load
// should disable them (a million changes in one transaction update one row a million times):
// recountJobs (store/job-counts.ts) rebuilds the rows from the table.

import type { Kysely } from "kysely";
import { sql } from "kysely";
import { JOB_STATUSES } from "../../core/statuses.js";
import { isPostgres } from "../db.js";
import { recountJobs, statusColumn } from "../job-counts.js";

/** Shards on PostgreSQL (one on SQLite): enough that two connections rarely share one. */
const PG_SHARDS = 16;

const column = (status: string) => sql.ref(statusColumn(status));
/** `+1` where the row's status is `status`, as an integer on both dialects. */
const isStatus = (row: "NEW" | "OLD", status: string) => sql`(CASE WHEN ${sql.raw(row)}.status = ${sql.lit(status)} THEN 1 ELSE 0 END)`;
const changes = (add: "NEW" | null, remove: "OLD" | null) =>
  sql.join(
    JOB_STATUSES.map((status) => {
      const plus = add ? sql` + ${isStatus(add, status)}` : sql``;
      const minus = remove ? sql` - ${isStatus(remove, status)}` : sql``;
      return sql`${column(status)} = ${column(status)}${plus}${minus}`;
    }),
  );

/** Each change to a job row, with the row whose status it adds and the row whose status it removes. */
const TRIGGER_EVENTS = [
  { event: "INSERT", add: "NEW", remove: null },
  { event: "UPDATE", add: "NEW", remove: "OLD" },
  { event: "DELETE", add: null, remove: "OLD" },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  let table = db.schema.createTable("job_counts").addColumn("shard", "integer", (c) => c.primaryKey());
  for (const status of JOB_STATUSES) table = table.addColumn(statusColumn(status), "bigint", (c) => c.notNull().defaultTo(0));
  await table.execute();

  const shards = pg ? PG_SHARDS : 1;
  await sql`INSERT INTO job_counts (shard) VALUES ${sql.join(Array.from({ length: shards }, (_, shard) => sql`(${sql.lit(shard)})`))}`.execute(db);

  if (pg) {
    // The functions name the table with its schema: a session with another search_path that
    // changes this schema's jobs must count here, not in a job_counts its own path finds first.
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db);
    const counts = sql.id(rows[0]!.schema, "job_counts");
    for (const { event, add, remove } of TRIGGER_EVENTS) {
      const name = sql.raw(`job_counts_${event.toLowerCase()}`);
      await sql`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE ${counts} SET ${changes(add, remove)} WHERE shard = pg_backend_pid() % ${sql.lit(PG_SHARDS)};
          RETURN NULL;
        END $$`.execute(db);
      const when = add && remove ? sql`WHEN (OLD.status IS DISTINCT FROM NEW.status)` : sql``;
      await sql`CREATE CONSTRAINT TRIGGER ${name} AFTER ${sql.raw(event)} ON jobs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW ${when} EXECUTE FUNCTION ${name}()`.execute(db);
    }
  } else {
    for (const { event, add, remove } of TRIGGER_EVENTS) {
      const name = sql.raw(`job_counts_${event.toLowerCase()}`);
      const when = add && remove ? sql`WHEN OLD.status IS NOT NEW.status` : sql``;
      await sql`CREATE TRIGGER ${name} AFTER ${sql.raw(event === "UPDATE" ? "UPDATE OF status" : event)} ON jobs ${when} BEGIN UPDATE job_counts SET ${changes(add, remove)} WHERE shard = 0; END`.execute(db);
    }
  }
  // The triggers first, then the count: a job changed in between is counted exactly either way
  // (the recount locks the table on PostgreSQL, and SQLite has one writer).
  await recountJobs(db);
}
