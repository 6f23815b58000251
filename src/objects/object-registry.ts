// The registry side of data objects (CONTRACT §5): where an object goes (scope, name, table),
// registering it with its operation log and lineage, finding it by name, describing its columns,
// and dropping it. tables.ts builds on this to make and read objects.

import type { Clock } from "../core/clock.js";
import { type ServiceError, conflict, invalid, notFound } from "../core/errors.js";
import type { IdGenerator } from "../core/ids.js";
import type { ColumnStore } from "../data/client.js";
import type { Source } from "../data/derive.js";
import { type Sql, ident, sql } from "../data/sql.js";
import type { Store } from "../store/db.js";
import { deleteObjectRow, findObjectByTable, findObjectForJob, insertObject } from "../store/data-objects.js";
import { releaseName, renewName, tryTakeName } from "../store/name-locks.js";
import { findParkedFor, insertParked, reassignParked } from "../store/parked-objects.js";
import { type ExternalSource, recordOperation } from "../store/object-lineage.js";
import type { DataObjectRow } from "../store/schema.js";

export type Scope = "temp" | "job" | "global";

export interface DataScope {
  db: Store;
  columns: ColumnStore;
  ids: IdGenerator;
  clock: Clock;
  jobId: bigint | null;
  taskId: bigint | null;
  attempt: number | null;
  /** Objects this attempt made, so the ones it does not hand on can be dropped when it ends. */
  created?: Set<bigint>;
}

export interface ObjectRecord {
  id: bigint;
  name: string;
  table: string;
  scope: Scope;
  jobId: bigint | null;
  sortSql: string | null;
}

export interface Placement {
  /** Required for job and global scope; temp objects are named after their table. */
  name?: string;
  /** Default: "job" when named inside a job, "global" when named outside one, else "temp". */
  scope?: Scope;
  /** Replace an existing object of the same name and scope instead of failing. */
  replace?: boolean;
}

export interface CreateOptions extends Placement {
  /** Column types overriding inference, e.g. {region: "LowCardinality(String)"}. */
  types?: Record<string, string>;
  /** The table's sorting key (columns); default none. */
  orderBy?: string[];
}

const OBJECT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RESERVED_NAME = /^(?:t_\d+|j_\d+_.*)$/;

const toRecord = (row: DataObjectRow): ObjectRecord => ({
  id: row.id,
  name: row.name,
  table: row.table_name,
  scope: row.scope as Scope,
  jobId: row.job_id,
  sortSql: row.sort_sql,
});

export const qualified = (ds: DataScope, table: string): Sql => sql`${ident(ds.columns.database)}.${ident(table)}`;

/** Where a new object goes: its scope, name and table (CONTRACT §5 naming). */
export function placeObject(ds: DataScope, placement: Placement): { id: bigint; name: string; table: string; scope: Scope } {
  const id = ds.ids.next();
  const scope = placement.scope ?? (placement.name ? (ds.jobId !== null ? "job" : "global") : "temp");
  if (!["temp", "job", "global"].includes(scope)) throw invalid(`scope must be temp, job or global, got "${scope}"`);
  if (scope === "temp") {
    if (placement.name) throw invalid("temp objects are named after their table; give a name with scope job or global");
    return { id, name: `t_${id}`, table: `t_${id}`, scope };
  }
  const name = placement.name;
  if (!name || !OBJECT_NAME.test(name)) throw invalid(`object name "${name ?? ""}" must match ${OBJECT_NAME}`);
  // A name is found by table name too: `t_<id>` is a temp's, `j_<job>_…` a job object's. A global
  // of such a name hid the temp a job's result named (GET /objects/t_… answered the global).
  if (RESERVED_NAME.test(name)) throw invalid(`object name "${name}" has the shape of a table name (t_<id>, j_<job id>_<name>), which names an object exactly: choose another`);
  if (scope === "job") {
    if (ds.jobId === null) throw invalid("job-scope objects are made inside a job");
    return { id, name, table: `j_${ds.jobId}_${name}`, scope };
  }
  return { id, name, table: `p_${name}`, scope };
}

export interface Registration {
  placed: { id: bigint; name: string; table: string; scope: Scope };
  operation: string;
  statement: Sql;
  inputs: ObjectRecord[];
  lineage: Record<string, [number, string][]>;
  sortSql: string | null;
  /** Files and URLs the table was read from (a load). */
  sources?: ExternalSource[];
}

/** How long a name's lease lasts without renewal, and how often a builder renews it. */
const NAME_LEASE_MS = 30_000;
/** How long a replacement waits for another one of the same name to finish (then 409 name_busy). */
export const NAME_WAIT_MS = 5 * 60_000;

/**
 * Builds an object's table with `build(table)` and registers it. A taken name is a conflict unless
 * replacing. A job or global name is leased in the SQL store for the whole of it (migration 004),
 * so overlapping builds of one name run one after the other: the second waits for the first (up to
 * NAME_WAIT_MS), then replaces what the first made, or finds the name taken. A replacement is
 * built beside the old table (so an object can be replaced by something computed from itself, and
 * a failed build leaves the old one intact), swapped in (see swapTables), and the registry's old
 * row gives way to the new one in one transaction: a reader finds the old object or the new one.
 */
export async function makeObject(ds: DataScope, r: Registration, replace: boolean | undefined, build: (table: string) => Promise<void>): Promise<ObjectRecord> {
  if (r.placed.scope === "temp") {
    // A temp's table is named after its own fresh id: nobody else can want it.
    await buildInto(ds, r.placed.table, build);
    return registerObject(ds, r, null);
  }
  return withNameLease(ds, r.placed.table, async () => {
    const existing = await findObjectByTable(ds.db, r.placed.table);
    if (existing && !replace) throw conflict(`a data object named "${r.placed.name}" already exists (pass replace: true to replace it)`, "name_taken");
    if (!existing) {
      await buildInto(ds, r.placed.table, build);
      return registerObject(ds, r, null);
    }
    const staging = `${r.placed.table}_new_${r.placed.id}`;
    await buildInto(ds, staging, build);
    // Inside an attempt, the old rows wait in `staging` for its end (objects/parking.ts): a failed
    // attempt puts back what it replaced (its cleanup drops what it made, so neither version was
    // left). An object the attempt made itself is not kept: what it had replaced, if anything,
    // now waits for the newer replacement.
    const inAttempt = ds.taskId !== null && ds.attempt !== null;
    const madeHere = ds.created?.has(existing.id) ?? false;
    const earlier = inAttempt && madeHere ? await findParkedFor(ds.db, existing.id) : undefined;
    const park = inAttempt && !madeHere;
    // After the swap the live name holds the new rows and `staging` the old ones.
    await swapTables(ds, r.placed.table, staging);
    let record: ObjectRecord;
    try {
      record = await registerObject(ds, r, existing.id, async (tx) => {
        if (park) await insertParked(tx, { parkedTable: staging, row: existing, replacementId: r.placed.id, taskId: ds.taskId!, attempt: ds.attempt!, nowMs: ds.clock.now() });
        if (earlier) await reassignParked(tx, earlier.parked_table, r.placed.id);
      });
    } catch (error) {
      await swapTables(ds, r.placed.table, staging).catch(() => undefined);
      await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, staging)}`).catch(() => undefined);
      throw error;
    }
    columnCache.delete(existing.id);
    if (!park) await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, staging)}`);
    return record;
  });
}

/** `build(table)`, dropping what it left behind when it fails. */
async function buildInto(ds: DataScope, table: string, build: (table: string) => Promise<void>): Promise<void> {
  try {
    await build(table);
  } catch (error) {
    await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, table)}`).catch(() => undefined);
    throw error;
  }
}

/**
 * Exchanges two tables' names. ClickHouse 21+ (and chDB) does it atomically with EXCHANGE TABLES
 * (Atomic databases); 18.16 has no EXCHANGE, so there both renames go in one RENAME statement,
 * which the server runs back to back. When the live table is gone (deleted meanwhile), the new one
 * simply takes its name.
 */
export async function swapTables(ds: DataScope, live: string, staging: string): Promise<void> {
  const features = await ds.columns.features();
  const exists = await ds.columns.query<{ n: number }>(sql`SELECT count() AS n FROM system.tables WHERE database = ${ds.columns.database} AND name = ${live}`);
  if (Number(exists[0]?.n ?? 0) === 0) {
    await ds.columns.command(sql`RENAME TABLE ${qualified(ds, staging)} TO ${qualified(ds, live)}`);
    return;
  }
  if (features.exchangeTables) {
    await ds.columns.command(sql`EXCHANGE TABLES ${qualified(ds, live)} AND ${qualified(ds, staging)}`);
    return;
  }
  const parked = `${staging}_old`;
  await ds.columns.command(
    sql`RENAME TABLE ${qualified(ds, live)} TO ${qualified(ds, parked)}, ${qualified(ds, staging)} TO ${qualified(ds, live)}, ${qualified(ds, parked)} TO ${qualified(ds, staging)}`,
  );
}

/**
 * Runs `work` holding the lease on `table`: waits for another holder (polling, up to `waitMs`, then
 * 409 name_busy), renews the lease while the work runs, releases it after.
 */
export async function withNameLease<T>(ds: Pick<DataScope, "db" | "ids" | "clock">, table: string, work: () => Promise<T>, waitMs = NAME_WAIT_MS): Promise<T> {
  const holder = `${ds.ids.next()}`;
  const deadline = Date.now() + waitMs;
  for (let pause = 10; !(await tryTakeName(ds.db, table, holder, ds.clock.now(), ds.clock.now() + NAME_LEASE_MS)); pause = Math.min(200, pause * 2)) {
    if (Date.now() > deadline) {
      throw conflict(`another task has been building "${table}" for over ${waitMs / 1000} s: try again later`, "name_busy");
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  const renewal = setInterval(() => void renewName(ds.db, table, holder, ds.clock.now() + NAME_LEASE_MS).catch(() => undefined), NAME_LEASE_MS / 3);
  renewal.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await releaseName(ds.db, table, holder).catch(() => undefined);
  }
}

/** Registers a built table with its operation log; with `replacing`, that row goes in the same transaction. */
async function registerObject(ds: DataScope, r: Registration, replacing: bigint | null, alsoInTransaction?: (tx: Store) => Promise<void>): Promise<ObjectRecord> {
  const now = ds.clock.now();
  try {
    await ds.db.transaction().execute(async (tx) => {
      if (replacing !== null) await deleteObjectRow(tx, replacing);
      await alsoInTransaction?.(tx);
      await insertObject(tx, {
        id: r.placed.id,
        name: r.placed.name,
        table_name: r.placed.table,
        scope: r.placed.scope,
        job_id: ds.jobId,
        task_id: ds.taskId,
        created_at: BigInt(now),
        sort_sql: r.sortSql,
      });
      await recordOperation(tx, {
        id: ds.ids.next(),
        objectId: r.placed.id,
        objectName: r.placed.name,
        operation: r.operation,
        sqlText: r.statement.text,
        jobId: ds.jobId,
        taskId: ds.taskId,
        attempt: ds.attempt,
        nowMs: now,
        inputs: r.inputs.map((i) => ({ id: i.id, name: i.name })),
        sources: r.sources,
        columns: Object.entries(r.lineage).flatMap(([column, sources]) =>
          sources.map(([index, inputColumn]) => ({ column, inputId: r.inputs[index]!.id, inputName: r.inputs[index]!.name, inputColumn })),
        ),
      });
    });
  } catch (error) {
    // A new table that could not be registered is dropped rather than left an orphan (a replaced
    // one is swapped back by the caller).
    if (replacing === null) await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, r.placed.table)}`).catch(() => undefined);
    throw error;
  }
  ds.created?.add(r.placed.id);
  return { id: r.placed.id, name: r.placed.name, table: r.placed.table, scope: r.placed.scope, jobId: ds.jobId, sortSql: r.sortSql };
}

export type ColumnList = { name: string; type: string }[];

/**
 * Columns by object id. An object's columns never change (appends keep them; a replaced object gets
 * a new id), and every round trip to the engine costs milliseconds, so each is described once.
 */
const columnCache = new Map<bigint, ColumnList>();

/** Forgets an object's columns (its table now holds other rows: objects/parking.ts). */
export const forgetColumns = (id: bigint): void => void columnCache.delete(id);
const COLUMN_CACHE_SIZE = 10_000;

export function rememberColumns(id: bigint, columns: ColumnList): void {
  if (columnCache.size >= COLUMN_CACHE_SIZE) columnCache.delete(columnCache.keys().next().value!);
  columnCache.set(id, columns);
}

/**
 * The error for a read of an object whose registry row is gone (delete_object, a purge: the reader
 * held it from before), or undefined while the row exists.
 */
export async function wasDeleted(ds: DataScope, record: ObjectRecord): Promise<ServiceError | undefined> {
  return (await isRegistered(ds, record)) ? undefined : notFound(`data object "${record.name}" was deleted while it was being read`);
}

/** Whether the object's registry row (this version of it) still exists. */
const isRegistered = async (ds: DataScope, record: ObjectRecord): Promise<boolean> =>
  (await ds.db.selectFrom("data_objects").select("id").where("id", "=", record.id).executeTakeFirst()) !== undefined;

/**
 * Refuses a handle whose object is gone: deleted, or replaced since the handle was taken (a job or
 * global object keeps its table's name, so the table now holds another version's rows, which a read
 * would take for this version's and lineage would credit to the dropped one).
 */
export async function checkCurrent(ds: DataScope, record: ObjectRecord): Promise<void> {
  if (await isRegistered(ds, record)) return;
  columnCache.delete(record.id);
  const successor = await findObjectByTable(ds.db, record.table);
  throw notFound(
    successor
      ? `data object "${record.name}" was replaced since this handle to it was taken: find it again to use its new version`
      : `data object "${record.name}" was deleted`,
  );
}

/** The columns of an object's table, in order. */
export async function describeColumns(ds: DataScope, record: ObjectRecord): Promise<ColumnList> {
  const cached = columnCache.get(record.id);
  if (cached) return cached;
  let rows: ColumnList;
  try {
    rows = await ds.columns.query<{ name: string; type: string }>(sql`DESCRIBE TABLE ${qualified(ds, record.table)}`);
  } catch {
    rows = [];
  }
  if (rows.length === 0) throw (await wasDeleted(ds, record)) ?? notFound(`the table of data object "${record.name}" is missing`);
  const columns = rows.map((r) => ({ name: r.name, type: r.type }));
  rememberColumns(record.id, columns);
  return columns;
}

export async function sourceOf(ds: DataScope, record: ObjectRecord): Promise<Source> {
  const columns = await describeColumns(ds, record);
  return { ref: qualified(ds, record.table), columns: columns.map((c) => c.name), types: columns.map((c) => c.type) };
}

/** Appends rows to an existing object (CONTRACT §5 insert); values are escaped, never spliced. */
export async function findObjectRecord(ds: Pick<DataScope, "db" | "jobId">, name: string, scope?: "global"): Promise<ObjectRecord> {
  const row = await findObjectForJob(ds.db, name, ds.jobId, scope);
  if (!row) throw notFound(`no data object is named "${name}"`);
  return toRecord(row);
}

/** Drops an object's table and its registry row; its operation log stays for lineage. */
export async function dropObject(db: Store, columns: ColumnStore, row: DataObjectRow): Promise<boolean> {
  columnCache.delete(row.id);
  await columns.command(sql`DROP TABLE IF EXISTS ${ident(columns.database)}.${ident(row.table_name)}`);
  return deleteObjectRow(db, row.id);
}

