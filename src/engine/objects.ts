// Data objects: column-store tables registered in SQL with their operation log and lineage
// (CONTRACT §5). Every function takes a DataScope: the stores, and the job, task and attempt that
// act (for attribution), so the same code serves task code, operations and tests.

import type { Clock } from "../core/clock.js";
import { conflict, invalid, notFound } from "../core/errors.js";
import type { IdGenerator } from "../core/ids.js";
import type { ColumnStore } from "../data/client.js";
import { type Derivation, type Source, checkColumnName } from "../data/derive.js";
import { type Sql, ident, raw, sql } from "../data/sql.js";
import { inferType, jsonConverter, normalizeType, toJsonValue } from "../data/types.js";
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

export const toRecord = (row: DataObjectRow): ObjectRecord => ({
  id: row.id,
  name: row.name,
  table: row.table_name,
  scope: row.scope as Scope,
  jobId: row.job_id,
  sortSql: row.sort_sql,
});

export const qualified = (ds: DataScope, table: string): Sql => sql`${ident(ds.columns.database)}.${ident(table)}`;

/** Where a new object goes: its scope, name and table (CONTRACT §5 naming). */
function place(ds: DataScope, placement: Placement): { id: bigint; name: string; table: string; scope: Scope } {
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

/** Makes room for a new table: a taken name is a conflict unless the caller replaces it. */
async function claimTable(ds: DataScope, table: string, name: string, replace: boolean | undefined): Promise<void> {
  const existing = await findObjectByTable(ds.db, table);
  if (!existing) return;
  if (!replace) throw conflict(`a data object named "${name}" already exists (pass replace: true to replace it)`, "name_taken");
  await dropObject(ds.db, ds.columns, existing);
}

interface Registration {
  placed: { id: bigint; name: string; table: string; scope: Scope };
  operation: string;
  statement: Sql;
  inputs: ObjectRecord[];
  lineage: Record<string, [number, string][]>;
  sortSql: string | null;
}

async function register(ds: DataScope, r: Registration): Promise<ObjectRecord> {
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

function orderClause(orderBy: string[] | undefined): Sql {
  if (!orderBy?.length) return raw("tuple()");
  const keys = orderBy.map((c) => ident(checkColumnName(c)).text);
  return raw(keys.length === 1 ? keys[0]! : `(${keys.join(", ")})`);
}

/** A new object from column arrays (CONTRACT §5 createObject). */
export async function createFromColumns(ds: DataScope, data: Record<string, readonly unknown[]>, options: CreateOptions = {}): Promise<ObjectRecord> {
  const names = Object.keys(data);
  if (names.length === 0) throw invalid("an object needs at least one column");
  names.forEach(checkColumnName);
  const lengths = new Set(names.map((n) => data[n]!.length));
  if (lengths.size > 1) throw invalid(`columns must have equal lengths, got ${[...lengths].join(", ")}`);
  for (const typed of Object.keys(options.types ?? {})) if (!names.includes(typed)) throw invalid(`types names "${typed}", which is not a column`);
  const features = await ds.columns.features();
  const types = names.map((n) => (options.types?.[n] ? normalizeType(options.types[n]!, features) : inferType(data[n]!, features)));
  const placed = place(ds, options);
  await claimTable(ds, placed.table, placed.name, options.replace);
  const definition = raw(names.map((n, i) => `${ident(n).text} ${types[i]}`).join(", "));
  const statement = sql`CREATE TABLE ${qualified(ds, placed.table)} (${definition}) ENGINE = MergeTree ORDER BY ${orderClause(options.orderBy)}`;
  await ds.columns.command(statement);
  const count = [...lengths][0] ?? 0;
  try {
    await insertInBatches(ds, placed.table, names, types, data, count);
  } catch (error) {
    await ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, placed.table)}`).catch(() => undefined);
    throw invalid(`rows could not be stored: ${(error as Error).message}`);
  }
  const record = await register(ds, { placed, operation: "create", statement, inputs: [], lineage: {}, sortSql: null });
  rememberColumns(record.id, names.map((name, i) => ({ name, type: types[i]! })));
  return record;
}

const INSERT_BATCH = 100_000;

async function insertInBatches(ds: DataScope, table: string, names: string[], types: string[], data: Record<string, readonly unknown[]>, count: number) {
  const converters = types.map(jsonConverter);
  const arrays = names.map((n) => data[n]!);
  for (let start = 0; start < count; start += INSERT_BATCH) {
    const end = Math.min(count, start + INSERT_BATCH);
    const rows: Record<string, unknown>[] = new Array(end - start);
    for (let i = start; i < end; i++) {
      const row: Record<string, unknown> = {};
      for (let c = 0; c < names.length; c++) row[names[c]!] = converters[c]!(arrays[c]![i]);
      rows[i - start] = row;
    }
    await ds.columns.insertRows(table, rows);
  }
}

/** A new object from row objects; columns in order of first appearance. */
export async function createFromRows(ds: DataScope, rows: readonly Record<string, unknown>[], options: CreateOptions = {}): Promise<ObjectRecord> {
  const seen = new Set<string>();
  for (const row of rows) {
    if (typeof row !== "object" || row === null || Array.isArray(row)) throw invalid("rows must be plain objects");
    for (const key of Object.keys(row)) seen.add(key);
  }
  for (const typed of Object.keys(options.types ?? {})) seen.add(typed);
  const names = [...seen]; // a Set keeps first-appearance order
  if (names.length === 0) throw invalid("rows must have at least one column (or give types for an empty object)");
  const data = Object.fromEntries(names.map((n) => [n, rows.map((r) => r[n])]));
  return createFromColumns(ds, data, options);
}

/** A new object derived by one SELECT over other objects (filter, select, join, …). */
export async function derive(ds: DataScope, operation: string, inputs: ObjectRecord[], derivation: Derivation, placement: Placement = {}): Promise<ObjectRecord> {
  const placed = place(ds, placement);
  await claimTable(ds, placed.table, placed.name, placement.replace);
  const statement = sql`CREATE TABLE ${qualified(ds, placed.table)} ENGINE = MergeTree ORDER BY tuple() AS ${derivation.select}`;
  await ds.columns.command(statement);
  return register(ds, { placed, operation, statement, inputs, lineage: derivation.lineage, sortSql: derivation.sortSql ?? null });
}

/** A new object from a query: `{name}` placeholders stand for the given objects' tables. */
export async function createFromQuery(ds: DataScope, query: string, objects: Record<string, ObjectRecord>, placement: Placement = {}): Promise<ObjectRecord> {
  const inputs: ObjectRecord[] = [];
  const text = query.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, key: string) => {
    const object = objects[key];
    if (!object) throw invalid(`query mentions {${key}} but no object was given for it`);
    if (!inputs.includes(object)) inputs.push(object);
    return qualified(ds, object.table).text;
  });
  if (/;\s*\S/.test(text.replace(/'(?:[^'\\]|\\.)*'/g, "''"))) throw invalid("a query is one SELECT statement");
  return derive(ds, "query", inputs, { select: raw(text), lineage: {} }, placement);
}

type ColumnList = { name: string; type: string }[];

/**
 * Columns by object id. An object's columns never change (appends keep them; a replaced object gets
 * a new id), and every round trip to the engine costs milliseconds, so each is described once.
 */
const columnCache = new Map<bigint, ColumnList>();
const COLUMN_CACHE_SIZE = 10_000;

function rememberColumns(id: bigint, columns: ColumnList): void {
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
  return { ref: qualified(ds, record.table), columns: (await describeColumns(ds, record)).map((c) => c.name) };
}

/** Appends rows to an existing object (CONTRACT §5 insert); values are escaped, never spliced. */
export async function insertRows(ds: DataScope, record: ObjectRecord, rows: readonly Record<string, unknown>[]): Promise<number> {
  const columns = await describeColumns(ds, record);
  const types = new Map(columns.map((c) => [c.name, c.type]));
  const prepared = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      const type = types.get(key);
      if (!type) throw invalid(`insert into "${record.name}": no column "${key}"`);
      out[key] = toJsonValue(value, type);
    }
    return out;
  });
  await ds.columns.insertRows(record.table, prepared);
  const now = ds.clock.now();
  await recordOperation(ds.db, {
    id: ds.ids.next(),
    objectId: record.id,
    objectName: record.name,
    operation: "insert",
    sqlText: `INSERT INTO ${qualified(ds, record.table).text} FORMAT JSONEachRow (${prepared.length} rows)`,
    jobId: ds.jobId,
    taskId: ds.taskId,
    attempt: ds.attempt,
    nowMs: now,
    inputs: [],
    columns: [],
  });
  return prepared.length;
}

export async function readRows(ds: DataScope, record: ObjectRecord, options: { limit?: number; offset?: number } = {}): Promise<Record<string, unknown>[]> {
  const order = record.sortSql ? raw(` ORDER BY ${record.sortSql}`) : raw("");
  const limit = options.limit !== undefined ? sql` LIMIT ${options.offset ?? 0}, ${options.limit}` : raw("");
  return ds.columns.query(sql`SELECT * FROM ${qualified(ds, record.table)}${order}${limit}`);
}

export async function readScalar(ds: DataScope, record: ObjectRecord, expression: Sql): Promise<unknown> {
  const rows = await ds.columns.query<{ value: unknown }>(sql`SELECT ${expression} AS value FROM ${qualified(ds, record.table)}`);
  return rows[0]?.value ?? null;
}

/** The object a name means for this scope's job (its job object, else global, else a temp table). */
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
