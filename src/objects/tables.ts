// Data objects (CONTRACT §5): column-store tables made from columns, rows or a SELECT over other
// objects, appended to and read. Every function takes a DataScope: the stores, and the job, task
// and attempt that act (for attribution), so the same code serves task code, operations and tests.

import { invalid } from "../core/errors.js";
import { type Derivation, checkColumnName, checkNewColumnName } from "../data/derive.js";
import { EXACT_TEXT_PREFIX, JsonLine } from "../data/client.js";
import { type Sql, ident, raw, sql } from "../data/sql.js";
import { convertRows, inferType, isDecimalType, jsonConverter, decimalRowJson, normalizeType, readConverter, readsAsDecimalText, toJsonValue } from "../data/types.js";
import { invalidateObjectStats } from "../store/data-objects.js";
import { type ExternalSource, recordOperation } from "../store/object-lineage.js";
import {
  type ColumnList,
  type CreateOptions,
  type DataScope,
  type ObjectRecord,
  type Placement,
  checkCurrent,
  describeColumns,
  placeObject,
  qualified,
  makeObject,
  rememberColumns,
} from "./object-registry.js";

function orderClause(orderBy: string[] | undefined): Sql {
  if (!orderBy?.length) return raw("tuple()");
  const keys = orderBy.map((c) => ident(checkColumnName(c)).text);
  return raw(keys.length === 1 ? keys[0]! : `(${keys.join(", ")})`);
}

/** A new object from column arrays (CONTRACT §5 createObject). */
export async function createFromColumns(ds: DataScope, data: Record<string, readonly unknown[]>, options: CreateOptions = {}): Promise<ObjectRecord> {
  const names = Object.keys(data);
  if (names.length === 0) throw invalid("an object needs at least one column");
  names.forEach(checkNewColumnName);
  const lengths = new Set(names.map((n) => data[n]!.length));
  if (lengths.size > 1) throw invalid(`columns must have equal lengths, got ${[...lengths].join(", ")}`);
  for (const typed of Object.keys(options.types ?? {})) if (!names.includes(typed)) throw invalid(`types names "${typed}", which is not a column`);
  const features = await ds.columns.features();
  const types = names.map((n) => (options.types?.[n] ? normalizeType(options.types[n]!, features) : inferType(data[n]!, features)));
  const placed = placeObject(ds, options);
  const definition = raw(names.map((n, i) => `${ident(n).text} ${types[i]}`).join(", "));
  const create = (table: string) => sql`CREATE TABLE ${qualified(ds, table)} (${definition}) ENGINE = MergeTree ORDER BY ${orderClause(options.orderBy)}`;
  const count = [...lengths][0] ?? 0;
  const registration = { placed, operation: "create", statement: create(placed.table), inputs: [], lineage: {}, sortSql: null };
  const record = await makeObject(ds, registration, options.replace, async (table) => {
    await ds.columns.command(create(table));
    try {
      await insertInBatches(ds, table, names, types, data, count);
    } catch (error) {
      throw invalid(`rows could not be stored: ${(error as Error).message}`);
    }
  });
  rememberColumns(record.id, names.map((name, i) => ({ name, type: types[i]! })));
  return record;
}

const INSERT_BATCH = 100_000;

async function insertInBatches(ds: DataScope, table: string, names: string[], types: string[], data: Record<string, readonly unknown[]>, count: number) {
  const converters = types.map(jsonConverter);
  const arrays = names.map((n) => data[n]!);
  // `row["__proto__"] = v` in a plain object sets its prototype, not a field: the column was stored
  // as 0 or "". A row without a prototype takes it as a field (only then: such rows are slower).
  const newRow: () => Record<string, unknown> = names.includes("__proto__") ? () => Object.create(null) as Record<string, unknown> : () => ({});
  for (let start = 0; start < count; start += INSERT_BATCH) {
    const end = Math.min(count, start + INSERT_BATCH);
    const rows: Record<string, unknown>[] = new Array(end - start);
    // The hot loop of a large ingest: the row and column are known from the loop's place when a
    // value is refused, with no per-value wrapper.
    let i = start;
    let c = 0;
    try {
      for (; i < end; i++) {
        const row = newRow();
        for (c = 0; c < names.length; c++) row[names[c]!] = converters[c]!(arrays[c]![i]);
        rows[i - start] = row;
      }
    } catch (error) {
      throw new TypeError(`column "${names[c]}", row ${i}: ${(error as Error).message}`);
    }
    await appendRows(ds, table, rows, names.map((name, i) => ({ name, type: types[i]! })));
  }
}

/** Appends JSON-ready rows; a table with decimal columns goes as text, their exact digits unquoted. */
export async function appendRows(ds: DataScope, table: string, rows: Record<string, unknown>[], columns: readonly { name: string; type: string }[]): Promise<void> {
  const decimals = new Set(columns.filter((c) => isDecimalType(c.type)).map((c) => c.name));
  await ds.columns.insertRows(table, decimals.size === 0 ? rows : rows.map((row) => new JsonLine(decimalRowJson(row, decimals))));
}

/** A new object from row objects; columns in order of first appearance. */
export async function createFromRows(ds: DataScope, rows: readonly Record<string, unknown>[], options: CreateOptions = {}): Promise<ObjectRecord> {
  const seen = new Set<string>();
  for (const row of rows) {
    if (typeof row !== "object" || row === null || Array.isArray(row)) throw invalid("rows must be plain objects");
    for (const key of Object.keys(row)) seen.add(key);
  }
  for (const typed of Object.keys(options.types ?? {})) {
    // With rows, a typed column that no row has is a typo; without rows, types declare the columns.
    if (rows.length > 0 && !seen.has(typed)) throw invalid(`types names "${typed}", which no row has`);
    seen.add(typed);
  }
  const names = [...seen]; // a Set keeps first-appearance order
  if (names.length === 0) throw invalid("rows must have at least one column (or give types for an empty object)");
  const data = Object.fromEntries(names.map((n) => [n, rows.map((r) => r[n])]));
  return createFromColumns(ds, data, options);
}

/** A new object derived by one SELECT over other objects (filter, select, join, …). */
export async function derive(
  ds: DataScope,
  operation: string,
  inputs: ObjectRecord[],
  derivation: Derivation,
  placement: Placement = {},
  sources?: ExternalSource[],
): Promise<ObjectRecord> {
  const placed = placeObject(ds, placement);
  const create = (table: string) => sql`CREATE TABLE ${qualified(ds, table)} ENGINE = MergeTree ORDER BY tuple() AS ${derivation.select}`;
  const registration = { placed, operation, statement: create(placed.table), inputs, lineage: derivation.lineage, sortSql: derivation.sortSql ?? null, sources };
  return makeObject(ds, registration, placement.replace, (table) => ds.columns.command(create(table)));
}

/** A new object from a query: `{name}` placeholders stand for the given objects' tables. */
export async function createFromQuery(ds: DataScope, query: string, objects: Record<string, ObjectRecord>, placement: Placement = {}): Promise<ObjectRecord> {
  const inputs: ObjectRecord[] = [];
  // {name} stands for an object outside string literals and quoted identifiers only.
  const text = query
    .split(/('(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, key: string) => {
            const object = objects[key];
            if (!object) throw invalid(`query mentions {${key}} but no object was given for it`);
            if (!inputs.includes(object)) inputs.push(object);
            return qualified(ds, object.table).text;
          }),
    )
    .join("");
  if (/;\s*\S/.test(text.replace(/'(?:[^'\\]|\\.)*'/g, "''"))) throw invalid("a query is one SELECT statement");
  for (const input of inputs) await checkCurrent(ds, input);
  return derive(ds, "query", inputs, { select: raw(text), lineage: {} }, placement);
}

export async function insertRows(ds: DataScope, record: ObjectRecord, rows: readonly Record<string, unknown>[]): Promise<number> {
  await checkCurrent(ds, record);
  const columns = await describeColumns(ds, record);
  const types = new Map(columns.map((c) => [c.name, c.type]));
  const prepared = rows.map((row, index) => {
    // No prototype: a column may be named constructor or __proto__ like any other.
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, value] of Object.entries(row)) {
      const type = types.get(key);
      if (!type) throw invalid(`insert into "${record.name}": no column "${key}"`);
      try {
        out[key] = toJsonValue(value, type);
      } catch (error) {
        throw invalid(`insert into "${record.name}": column "${key}", row ${index}: ${(error as Error).message}`);
      }
    }
    // A column left out is a null to it: ClickHouse would store its default ("", 0) in silence.
    for (const [name, type] of types) {
      if (Object.hasOwn(out, name)) continue;
      try {
        out[name] = toJsonValue(null, type);
      } catch {
        throw invalid(`insert into "${record.name}": row ${index} has no value for column "${name}" (${type}), which is not Nullable`);
      }
    }
    return out;
  });
  await appendRows(ds, record.table, prepared, columns);
  // After the rows are in: a count measured from now on includes them.
  await invalidateObjectStats(ds.db, record.id);
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

/** What a read needs of its source (a stored object, or a chain read as a subquery: chains.ts). */
export interface ReadSource {
  /** The table, or a parenthesized SELECT. */
  from: Sql;
  /** The ORDER BY its rows are read in. */
  sortSql: string | null;
  columns(): Promise<ColumnList>;
}

/**
 * Rows of a source, every column (`*`) or one, then `tail` (ORDER BY, LIMIT), read exactly: wide
 * integers by their quoted digits, wide decimals as their text, selected beside the column under
 * another name (an alias of the column's own name would be what an ORDER BY on it sorts by).
 */
export async function selectRows(ds: DataScope, source: ReadSource, pick: { column: string } | "*", tail: Sql): Promise<Record<string, unknown>[]> {
  const columns = await source.columns();
  const exact = columns
    .filter((c) => (pick === "*" || c.name === pick.column) && readsAsDecimalText(c.type))
    .map((c, i) => ({ name: c.name, alias: `${EXACT_TEXT_PREFIX}${i}` }));
  const list = pick === "*" ? "*" : ident(pick.column).text;
  const extra = exact.map((e) => `, ${ident(e.name).text} AS ${e.alias}`).join("");
  const rows = await ds.columns.query<Record<string, unknown>>(sql`SELECT ${raw(list + extra)} FROM ${source.from}${tail}`);
  for (const row of rows) {
    for (const { name, alias } of exact) {
      row[name] = row[alias];
      delete row[alias];
    }
  }
  return convertRows(rows, columns);
}

export async function readRows(ds: DataScope, source: ReadSource, options: { limit?: number; offset?: number } = {}): Promise<Record<string, unknown>[]> {
  const order = source.sortSql ? raw(` ORDER BY ${source.sortSql}`) : raw("");
  for (const [name, value] of [["limit", options.limit], ["offset", options.offset]] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) throw invalid(`rows: ${name} must be a whole number, 0 or more (got ${String(value)})`);
  }
  const paged = options.limit !== undefined || options.offset !== undefined;
  // An offset alone needs a length: ClickHouse 18.16 overflows on a huge one, so use the row count.
  const length = options.limit ?? (paged ? Number(await readScalar(ds, source, raw("count()"))) : 0);
  const limit = paged ? sql` LIMIT ${options.offset ?? 0}, ${length}` : raw("");
  return selectRows(ds, source, "*", sql`${order}${limit}`);
}

export async function readScalar(ds: DataScope, source: ReadSource, expression: Sql): Promise<unknown> {
  // The value's type comes along, so a 64-bit result is read exactly. The aliases are no names an
  // author's column would have: an alias shadows a column of its name inside the expression
  // (`max(type)` read the type's name), or makes it cyclic on 18.16.
  const read = async (alias: string) =>
    (await ds.columns.query<Record<string, unknown> & { __jobhouse_type: string }>(
      sql`SELECT ${expression} AS ${raw(alias)}, toTypeName(${raw(alias)}) AS __jobhouse_type FROM ${source.from} LIMIT 1`,
    ))[0];
  let row = await read("__jobhouse_value");
  if (!row) return null;
  // A wide decimal's JSON number was rounded: it is read again as its text (rare enough for two reads).
  const alias = readsAsDecimalText(row.__jobhouse_type) ? `${EXACT_TEXT_PREFIX}value` : "__jobhouse_value";
  if (alias !== "__jobhouse_value") row = await read(alias);
  if (!row) return null;
  return readConverter(row.__jobhouse_type)?.(row[alias]) ?? row[alias];
}

/** The object a name means for this scope's job (its job object, else global, else a temp table). */
