// The data_objects registry: one row per column-store table that jobhouse manages (CONTRACT §5).

import { countOf, decodeIdCursor, pageOf, startsWith } from "./paging.js";
import type { Insertable } from "kysely";
import type { DataObjectRow, DataObjectsTable } from "./schema.js";
import type { Store } from "./db.js";
import { type Given, prepared } from "./prepared.js";

export interface ObjectQuery {
  prefix?: string;
  scope?: string;
  beforeMs?: number;
  afterMs?: number;
}

/** The values of an ObjectQuery's given filters, in SQL's terms. */
interface ObjectFilters {
  prefix: string | undefined;
  scope: string | undefined;
  before: bigint | undefined;
  after: bigint | undefined;
}

const objectFilters = (q: ObjectQuery): ObjectFilters => ({
  prefix: q.prefix || undefined,
  scope: q.scope || undefined,
  before: q.beforeMs === undefined ? undefined : BigInt(q.beforeMs),
  after: q.afterMs === undefined ? undefined : BigInt(q.afterMs),
});

function filtered(db: Store, v: ObjectFilters, given: Given<ObjectFilters>) {
  let query = db.selectFrom("data_objects");
  if (given.prefix) query = query.where(startsWith("name", v.prefix!));
  if (given.scope) query = query.where("scope", "=", v.scope!);
  if (given.before) query = query.where("created_at", "<", v.before!);
  if (given.after) query = query.where("created_at", ">", v.after!);
  return query;
}

const objectList = {
  page: prepared((db, v: ObjectFilters & { beforeId: bigint | undefined; limit: number }, given) => {
    const page = filtered(db, v, given).selectAll().orderBy("id", "desc").limit(v.limit);
    return given.beforeId ? page.where("id", "<", v.beforeId!) : page;
  }),
  count: prepared((db, v: ObjectFilters, given) => filtered(db, v, given).select((e) => e.fn.countAll().as("count"))),
  all: prepared((db, v: ObjectFilters, given) => filtered(db, v, given).selectAll().orderBy("id", "asc")),
};

export async function listObjects(
  db: Store,
  q: ObjectQuery & { limit: number; cursor?: string },
): Promise<{ rows: DataObjectRow[]; total: number; nextCursor: string | null }> {
  const filters = objectFilters(q);
  const beforeId = q.cursor ? decodeIdCursor(q.cursor) : undefined;
  const [rows, total] = await Promise.all([objectList.page.rows(db, Object.assign({ beforeId, limit: q.limit + 1 }, filters)), objectList.count.first(db, filters)]);
  const { rows: items, nextCursor } = pageOf(rows, q.limit, (r) => String(r.id));
  return { rows: items, total: countOf(total), nextCursor };
}

export async function findAllObjects(db: Store, q: ObjectQuery): Promise<DataObjectRow[]> {
  return objectList.all.rows(db, objectFilters(q));
}

/** An object by its name or its table name; the most recent when several job objects share a name. */
export async function findObject(db: Store, name: string): Promise<DataObjectRow | undefined> {
  return objectByName.first(db, { name });
}

const objectByName = prepared((db, v: { name: string }) =>
  db
    .selectFrom("data_objects")
    .selectAll()
    .where((eb) => eb.or([eb("name", "=", v.name), eb("table_name", "=", v.name)]))
    .orderBy("id", "desc")
    .limit(1),
);

export async function findObjectById(db: Store, id: bigint): Promise<DataObjectRow | undefined> {
  return id < 2n ** 63n ? db.selectFrom("data_objects").selectAll().where("id", "=", id).executeTakeFirst() : undefined;
}

export async function insertObject(db: Store, row: Insertable<DataObjectsTable>): Promise<void> {
  await db.insertInto("data_objects").values(row).execute();
}

/**
 * Guarded delete: false when someone else removed the row first. The row moves to
 * dropped_objects in the same transaction, so lineage through the object still names its table.
 */
export async function deleteObjectRow(db: Store, id: bigint, nowMs = Date.now()): Promise<boolean> {
  const move = async (tx: Store) => {
    const row = await tx.deleteFrom("data_objects").where("id", "=", id).returningAll().executeTakeFirst();
    if (!row) return false;
    const { id: _, name, table_name, scope, job_id, created_at } = row;
    await tx.insertInto("dropped_objects").values({ id, name, table_name, scope, job_id, created_at, dropped_at: nowMs }).onConflict((oc) => oc.column("id").doNothing()).execute();
    return true;
  };
  return db.isTransaction ? move(db) : db.transaction().execute(move);
}

export async function findObjectByTable(db: Store, table: string): Promise<DataObjectRow | undefined> {
  return db.selectFrom("data_objects").selectAll().where("table_name", "=", table).executeTakeFirst();
}

/**
 * The object a name means inside a job: that job's own object of that name, else the global one,
 * else a temp object by its table name.
 */
export async function findObjectForJob(db: Store, name: string, jobId: bigint | null, scope?: "global"): Promise<DataObjectRow | undefined> {
  const candidates = await db
    .selectFrom("data_objects")
    .selectAll()
    .where((eb) => eb.or([eb("name", "=", name), eb("table_name", "=", name)]))
    .execute();
  // A global object a task handed on: that one, even where the job has one of the same name.
  if (scope === "global") return candidates.find((o) => o.scope === "global" && o.name === name);
  const own = candidates.find((o) => o.scope === "job" && jobId !== null && o.job_id === jobId);
  const exact = candidates.find((o) => o.scope === "global") ?? candidates.find((o) => o.table_name === name);
  if (own ?? exact) return own ?? exact;
  // Another job's object by its bare name: only from outside any job (the most recent one).
  return jobId === null ? candidates.sort((a, b) => (a.id > b.id ? -1 : 1))[0] : undefined;
}

/** Temp (and, with `scopes`, other) objects a job made. */
export async function findObjectsOfJob(db: Store, jobId: bigint, scopes: string[]): Promise<DataObjectRow[]> {
  return db.selectFrom("data_objects").selectAll().where("job_id", "=", jobId).where("scope", "in", scopes).execute();
}

/** A temp object goes to another job, whose retention it then follows (see handOnReusedObjects). */
export async function moveTempToJob(db: Store, id: bigint, jobId: bigint): Promise<void> {
  await db.updateTable("data_objects").set({ job_id: jobId }).where("id", "=", id).where("scope", "=", "temp").execute();
}

/** Temp objects a finished job hands back become job-scoped: kept until the job's retention ends. */
export async function keepWithJob(db: Store, ids: bigint[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable("data_objects").set({ scope: "job" }).where("id", "in", ids).where("scope", "=", "temp").execute();
}

/**
 * Stores an object's measured row count and size, unless an append moved its epoch since the row
 * was read (the measurement may predate the append): the next read measures again.
 */
export async function saveObjectStats(db: Store, id: bigint, epoch: number, stats: { rowCount: number; sizeBytes: number }): Promise<void> {
  await db.updateTable("data_objects").set({ row_count: stats.rowCount, size_bytes: stats.sizeBytes }).where("id", "=", id).where("stats_epoch", "=", epoch).execute();
}

/** After rows were appended to an object: its stored stats are stale until measured again. */
export async function invalidateObjectStats(db: Store, id: bigint): Promise<void> {
  await db.updateTable("data_objects").set((eb) => ({ row_count: null, size_bytes: null, stats_epoch: eb("stats_epoch", "+", 1) })).where("id", "=", id).execute();
}
