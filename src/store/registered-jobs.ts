// The registered_jobs table: registrations by name, filtered pages and the enabled flag.

import { sql } from "kysely";
import { decodeCursor, countOf, pageOf, startsWith } from "./paging.js";
import type { RegisteredJobRow } from "./schema.js";
import type { Store } from "./db.js";
import { type Given, prepared } from "./prepared.js";

export interface NewRegisteredJob {
  name: string;
  entrypoint: string;
  schedule: string | null;
  timezone: string | null;
  enabled: boolean;
  defaults: Record<string, unknown>;
  preservationMode: string | null;
  nextRunAtMs: number | null;
  nowMs: number;
  kwargsSchema: object | null;
  onFailure: string | null;
  maxActiveRuns: number | null;
  overlap: "queue" | "skip";
}

const rowValues = (r: NewRegisteredJob) => ({
  entrypoint: r.entrypoint,
  schedule: r.schedule,
  timezone: r.timezone,
  enabled: r.enabled ? 1 : 0,
  defaults: JSON.stringify(r.defaults),
  preservation_mode: r.preservationMode,
  next_run_at: r.nextRunAtMs,
  updated_at: r.nowMs,
  kwargs_schema: r.kwargsSchema === null ? null : JSON.stringify(r.kwargsSchema),
  on_failure: r.onFailure,
  max_active_runs: r.maxActiveRuns,
  overlap: r.overlap,
});

/**
 * A registration's kwargs JSON Schema, as its job's code now declares it (start-run.ts); only where
 * it still holds the one the run was planned against: a registration made meanwhile says its own.
 */
export async function updateKwargsSchema(db: Store, name: string, entrypoint: string, from: string | null, to: string | null): Promise<void> {
  await db
    .updateTable("registered_jobs")
    .set({ kwargs_schema: to })
    .where("name", "=", name)
    .where("entrypoint", "=", entrypoint)
    .where((eb) => (from === null ? eb("kwargs_schema", "is", null) : eb("kwargs_schema", "=", from)))
    .execute();
}

/** Inserts a registration; throws the database's unique violation when the name exists. */
export async function insertRegisteredJob(db: Store, r: NewRegisteredJob): Promise<void> {
  await db
    .insertInto("registered_jobs")
    .values({ name: r.name, created_at: r.nowMs, ...rowValues(r) })
    .execute();
}

/**
 * Inserts a registration or replaces every field of the existing one but its name and creation
 * time, in one statement (two concurrent replaces: the later one wins whole, never a mix).
 */
export async function upsertRegisteredJob(db: Store, r: NewRegisteredJob): Promise<void> {
  const values = rowValues(r);
  // A fire that is due and not yet taken (the scheduler ticks once a second) is kept when the new
  // registration is scheduled too: replaced in that moment, the run of that time was lost in silence.
  const nextRunAt =
    r.nextRunAtMs === null
      ? null
      : sql<number>`CASE WHEN registered_jobs.enabled = ${1} AND registered_jobs.next_run_at IS NOT NULL AND registered_jobs.next_run_at <= ${r.nowMs} THEN registered_jobs.next_run_at ELSE ${r.nextRunAtMs} END`;
  await db
    .insertInto("registered_jobs")
    .values({ name: r.name, created_at: r.nowMs, ...values })
    .onConflict((oc) => oc.column("name").doUpdateSet({ ...values, next_run_at: nextRunAt }))
    .execute();
}

export async function findRegisteredJob(db: Store, name: string): Promise<RegisteredJobRow | undefined> {
  return db.selectFrom("registered_jobs").selectAll().where("name", "=", name).executeTakeFirst();
}

export async function listRegisteredJobs(
  db: Store,
  q: { enabled?: boolean; name?: string; limit: number; cursor?: string },
): Promise<{ rows: RegisteredJobRow[]; total: number; nextCursor: string | null }> {
  const filters: RegisteredFilters = { enabled: q.enabled === undefined ? undefined : q.enabled ? 1 : 0, prefix: q.name || undefined };
  // The key is a registered name (register_job's and job()'s name rules), so anything else is no cursor of this list.
  const after = q.cursor ? decodeCursor(q.cursor, (k) => /^[A-Za-z0-9_.-]{1,128}$/.test(k)) : undefined;
  const [rows, total] = await Promise.all([registeredList.page.rows(db, Object.assign({ after, limit: q.limit + 1 }, filters)), registeredList.count.first(db, filters)]);
  const { rows: items, nextCursor } = pageOf(rows, q.limit, (r) => r.name);
  return { rows: items, total: countOf(total), nextCursor };
}

interface RegisteredFilters {
  enabled: number | undefined;
  prefix: string | undefined;
}

const registeredList = (() => {
  const filtered = (db: Store, v: RegisteredFilters, given: Given<RegisteredFilters>) => {
    let query = db.selectFrom("registered_jobs");
    if (given.enabled) query = query.where("enabled", "=", v.enabled!);
    if (given.prefix) query = query.where(startsWith("name", v.prefix!));
    return query;
  };
  return {
    page: prepared((db, v: RegisteredFilters & { after: string | undefined; limit: number }, given) => {
      const page = filtered(db, v, given).selectAll().orderBy("name", "asc").limit(v.limit);
      return given.after ? page.where("name", ">", v.after!) : page;
    }),
    count: prepared((db, v: RegisteredFilters, given) => filtered(db, v, given).select((e) => e.fn.countAll().as("count"))),
  };
})();

/** Sets the enabled flag and the next fire time; idempotent, so enabling twice is not a conflict. */
export async function setRegisteredJobEnabled(
  db: Store,
  name: string,
  enabled: boolean,
  nextRunAtMs: number | null,
  nowMs: number,
): Promise<RegisteredJobRow | undefined> {
  // Enabling an enabled schedule keeps its fire time, which may be due: a fire missed while nothing
  // ran stays owed (CONTRACT §4). Decided inside the statement, on the row as it is then, so a fire
  // that a background process commits meanwhile is never set back (it would fire twice).
  const nextRunAt = enabled ? sql<bigint | null>`CASE WHEN enabled = ${1} AND next_run_at IS NOT NULL THEN next_run_at ELSE ${nextRunAtMs} END` : null;
  await db
    .updateTable("registered_jobs")
    .set({ enabled: enabled ? 1 : 0, next_run_at: nextRunAt, updated_at: nowMs })
    .where("name", "=", name)
    .execute();
  return findRegisteredJob(db, name);
}

/** Enabled schedules whose next fire time has come. */
export async function findDueSchedules(db: Store, nowMs: number): Promise<RegisteredJobRow[]> {
  return db
    .selectFrom("registered_jobs")
    .selectAll()
    .where("enabled", "=", 1)
    .where("next_run_at", "is not", null)
    .where("next_run_at", "<=", BigInt(nowMs))
    .execute();
}

/**
 * Moves a schedule from the fire time it was read with to the next one. Guarded by the old value:
 * of several background processes, exactly one wins each fire time.
 */
export async function advanceSchedule(db: Store, name: string, fromMs: bigint, toMs: number | null): Promise<boolean> {
  const result = await db
    .updateTable("registered_jobs")
    .set({ next_run_at: toMs })
    .where("name", "=", name)
    .where("next_run_at", "=", fromMs)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
