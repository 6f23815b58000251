// 014: what PostgreSQL's planner assumes about a task's dependency edges. One fan-in of N tasks
// makes a single task_id cover every row of task_deps, and ANALYZE then records one distinct value:
// a lookup of any task's edges is estimated at every row, and the job page's per-task edge list
// scanned all 100,000 edges once per task (20 s for a page; bench/scale.ts, test/large-fan-out).
// Both columns are declared to hold about one distinct value per two rows (a task has few edges
// in either direction on average), which keeps lookups by either column on their indexes whatever
// one graph's shape. The setting takes effect at the table's next ANALYZE, run here. SQLite plans
// without such statistics.

import type { Kysely } from "kysely";
import { sql } from "kysely";
import { isPostgres } from "../db.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`ALTER TABLE task_deps ALTER COLUMN task_id SET (n_distinct = -0.5), ALTER COLUMN depends_on_id SET (n_distinct = -0.5)`.execute(db);
  await sql`ANALYZE task_deps`.execute(db);
}
