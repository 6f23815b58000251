// The registry side of data objects (CONTRACT §5): where an object goes (scope, name, table),
// registering it with its operation log and lineage, finding it by name, describing its columns,
// and dropping it. objects.ts builds on this to make and read objects.

import type { Clock } from "../core/clock.js";
import { conflict, invalid, notFound } from "../core/errors.js";
import type { IdGenerator } from "../core/ids.js";
import type { ColumnStore } from "../data/client.js";
import type { Source } from "../data/derive.js";
import { type Sql, ident, sql } from "../data/sql.js";
import type { Store } from "../store/db.js";
import { deleteObjectRow, findObjectByTable, findObjectForJob, insertObject } from "../store/data-objects.js";
import { recordOperation } from "../store/object-lineage.js";
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
  if (scope === "job") {
    if (ds.jobId === null) throw invalid("job-scope objects are made inside a job");
    return { id, name, table: `j_${ds.jobId}_${name}`, scope };
  }
  return { id, name, table: `p_${name}`, scope };
}

/**
 * Builds an object's table with `build(table)`. A taken name is a conflict unless replacing; a
 * replacement is built beside the old table and swapped in only once complete, so an object can be
 * replaced by something computed from itself, and a failed build leaves the old one intact.
 */
export async function buildTable(
  ds: DataScope,
  placed: { id: bigint; name: string; table: string },
  replace: boolean | undefined,
  build: (table: string) => Promise<void>,
): Promise<void> {
  const existing = await findObjectByTable(ds.db, placed.table);
  if (existing && !replace) throw conflict(`a data object named "${placed.name}" already exists (pass replace: true to replace it)`, "name_taken");
  const target = existing ? `${placed.table}_new_${placed.id}` : placed.table;
  try {
    await build(target);
  } catch (error) {
    await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, target)}`).catch(() => undefined);
    throw error;
  }
  if (existing) {
    await dropObject(ds.db, ds.columns, existing);
    await ds.columns.command(sql`RENAME TABLE ${qualified(ds, target)} TO ${qualified(ds, placed.table)}`);
  }
}

export interface Registration {
  placed: { id: bigint; name: string; table: string; scope: Scope };
  operation: string;
  statement: Sql;
  inputs: ObjectRecord[];
  lineage: Record<string, [number, string][]>;
  sortSql: string | null;
}

export async function registerObject(ds: DataScope, r: Registration): Promise<ObjectRecord> {
  const now = ds.clock.now();
  try {
    await ds.db.transaction().execute(async (tx) => {
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
        columns: Object.entries(r.lineage).flatMap(([column, sources]) =>
          sources.map(([index, inputColumn]) => ({ column, inputId: r.inputs[index]!.id, inputName: r.inputs[index]!.name, inputColumn })),
        ),
      });
    });
  } catch (error) {
    // The table exists but could not be registered: drop it rather than leave an orphan.
    await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, r.placed.table)}`).catch(() => undefined);
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
const COLUMN_CACHE_SIZE = 10_000;

export function rememberColumns(id: bigint, columns: ColumnList): void {
  if (columnCache.size >= COLUMN_CACHE_SIZE) columnCache.delete(columnCache.keys().next().value!);
  columnCache.set(id, columns);
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
  if (rows.length === 0) throw notFound(`the table of data object "${record.name}" is missing`);
  const columns = rows.map((r) => ({ name: r.name, type: r.type }));
  rememberColumns(record.id, columns);
  return columns;
}

export async function sourceOf(ds: DataScope, record: ObjectRecord): Promise<Source> {
  const columns = await describeColumns(ds, record);
  return { ref: qualified(ds, record.table), columns: columns.map((c) => c.name), types: columns.map((c) => c.type) };
}

/** Appends rows to an existing object (CONTRACT §5 insert); values are escaped, never spliced. */
export async function findObjectRecord(ds: Pick<DataScope, "db" | "jobId">, name: string): Promise<ObjectRecord> {
  const row = await findObjectForJob(ds.db, name, ds.jobId);
  if (!row) throw notFound(`no data object is named "${name}"`);
  return toRecord(row);
}

/** Drops an object's table and its registry row; its operation log stays for lineage. */
export async function dropObject(db: Store, columns: ColumnStore, row: DataObjectRow): Promise<boolean> {
  columnCache.delete(row.id);
  await columns.command(sql`DROP TABLE IF EXISTS ${ident(columns.database)}.${ident(row.table_name)}`);
  return deleteObjectRow(db, row.id);
}

