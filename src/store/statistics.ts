// The planner's statistics after a sudden growth of the tasks table. A worker's statements keep one
// generic plan per connection (ENGINE_PLAN_SETTINGS in db.ts), made with the statistics of their
// first use: a plan made while the table held a few rows may read a small index whole instead of
// looking rows up by key. ANALYZE replaces the statistics and invalidates every cached plan that
// reads the table, in every session, so the next execution plans for the table as it is.
// Autovacuum analyzes too, but only once a minute at best; a fan-out of thousands of tasks would
// run its first minute on the old plans.

import { sql } from "kysely";
import { type Store, isPostgres } from "./db.js";

/** Fewer new tasks than this never justify an ANALYZE of their own. */
const MIN_GROWTH_ROWS = 1_000;

/**
 * After `added` tasks were inserted at once: ANALYZE the tasks and their edges when that grew the
 * table by half or more of what the statistics last counted. Each table on its own, the tasks
 * first: a lock held by another ANALYZE or a VACUUM (which refreshes the statistics itself) is not
 * waited for, and a refused one does not undo the other. Throws what PostgreSQL refused.
 */
export async function refreshStatisticsAfterGrowth(db: Store, added: number): Promise<void> {
  if (!isPostgres(db) || added < MIN_GROWTH_ROWS) return;
  const { rows } = await sql<{ counted: number }>`SELECT reltuples AS counted FROM pg_class WHERE oid = 'tasks'::regclass`.execute(db);
  // -1: never analyzed yet.
  const counted = Math.max(0, Number(rows[0]?.counted ?? 0));
  if (added * 2 < counted) return;
  for (const analyze of [sql`ANALYZE tasks`, sql`ANALYZE task_deps`]) {
    await db.transaction().execute(async (tx) => {
      await sql`SET LOCAL lock_timeout = '200ms'`.execute(tx);
      await analyze.execute(tx);
    });
  }
}
