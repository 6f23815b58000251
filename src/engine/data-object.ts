// DataObject: the handle task code holds on a data object (CONTRACT §5). Every method that makes a
// new object runs one ClickHouse statement and records the operation, its inputs and the acting
// task; reads run SELECTs. Returned from a task it travels as {"object": "<name>"}.

import type { Sql } from "../data/sql.js";
import { ident, raw, sql } from "../data/sql.js";
import * as derivations from "../data/derive.js";
import { currentExecution } from "./execution.js";
import { type FileOptions, createFromFile } from "./ingest.js";
import {
  type CreateOptions,
  type DataScope,
  type ObjectRecord,
  type Placement,
  describeColumns,
  findObjectRecord,
  qualified,
  sourceOf,
} from "./object-registry.js";
import { createFromColumns, createFromQuery, createFromRows, derive, insertRows, readRows, readScalar, selectRows } from "./objects.js";

/** The data scope of the running task; objects made outside one use the scope they were made with. */
async function scopeFor(fallback?: DataScope): Promise<DataScope> {
  const execution = currentExecution();
  if (execution) return execution.data();
  if (fallback) return fallback;
  throw new Error("data objects are made and used inside a job's tasks");
}

const isPlacement = (value: unknown): value is Placement =>
  typeof value === "object" && value !== null && !(value instanceof DataObject) && !Array.isArray(value);

export class DataObject {
  constructor(
    readonly record: ObjectRecord,
    /** The scope used outside tasks (scripts, tests); inside a task its own scope is used. */
    readonly boundScope?: DataScope,
  ) {}

  get name(): string {
    return this.record.name;
  }
  get table(): string {
    return this.record.table;
  }
  get scope(): string {
    return this.record.scope;
  }

  /** CONTRACT §4: a task returning an object has result_ref {"object": name}. */
  toJSON(): { object: string } {
    return { object: this.record.name };
  }

  private async derived(operation: string, inputs: DataObject[], build: (sources: derivations.Source[]) => derivations.Derivation, placement?: Placement) {
    const ds = await scopeFor(this.boundScope);
    const sources = await Promise.all(inputs.map((o) => sourceOf(ds, o.record)));
    const record = await derive(ds, operation, inputs.map((o) => o.record), build(sources), placement);
    return new DataObject(record, this.boundScope);
  }

  /** Rows where the ClickHouse condition holds. */
  filter(condition: string, placement?: Placement): Promise<DataObject> {
    return this.derived("filter", [this], ([src]) => derivations.filter(src!, condition), placement);
  }

  /** Columns computed by ClickHouse expressions: {out: "amount * 1.2"}; or a list of columns to keep. */
  select(outputs: Record<string, string> | string[], placement?: Placement): Promise<DataObject> {
    const map = Array.isArray(outputs) ? Object.fromEntries(outputs.map((c) => [c, derivations.checkColumnName(c)])) : outputs;
    return this.derived("select", [this], ([src]) => derivations.project(src!, map), placement);
  }

  /** Groups by key columns; `.agg({total: "sum(amount)"})` makes the object. */
  groupBy(...keys: string[]): { agg(aggregates: Record<string, string>, placement?: Placement): Promise<DataObject> } {
    return {
      agg: (aggregates, placement) => this.derived("group_by", [this], ([src]) => derivations.aggregate(src!, keys, aggregates), placement),
    };
  }

  /** Joins on shared key columns; right-side name clashes get `suffix` (default "_right"). */
  join(other: DataObject, options: { on: string | string[]; how?: derivations.JoinKind; suffix?: string }, placement?: Placement): Promise<DataObject> {
    const on = Array.isArray(options.on) ? options.on : [options.on];
    return this.derived("join", [this, other], ([l, r]) => derivations.join(l!, r!, on, options.how ?? "inner", options.suffix), placement);
  }

  /** All rows of this and the other objects (same columns). */
  union(...others: (DataObject | Placement)[]): Promise<DataObject> {
    const placement = isPlacement(others[others.length - 1]) ? (others.pop() as Placement) : undefined;
    return this.derived("union", [this, ...(others as DataObject[])], (sources) => derivations.union(sources), placement);
  }

  /** Sorted by columns ("amount DESC"); reads of the result keep the order. */
  sort(...keys: (string | Placement)[]): Promise<DataObject> {
    const placement = isPlacement(keys[keys.length - 1]) ? (keys.pop() as Placement) : undefined;
    return this.derived("sort", [this], ([src]) => derivations.sort(src!, keys as string[]), placement);
  }

  /** The first n rows (in sort order when sorted). */
  limit(n: number, placement?: Placement): Promise<DataObject> {
    return this.derived("limit", [this], ([src]) => derivations.limit(src!, n, this.record.sortSql), placement);
  }

  /** Distinct rows over the given columns (all when none). */
  distinct(columns: string[] = [], placement?: Placement): Promise<DataObject> {
    return this.derived("distinct", [this], ([src]) => derivations.distinct(src!, columns), placement);
  }

  /** Appends rows; returns how many. */
  async insert(rows: Record<string, unknown>[]): Promise<number> {
    return insertRows(await scopeFor(this.boundScope), this.record, rows);
  }

  async rows(options: { limit?: number; offset?: number } = {}): Promise<Record<string, unknown>[]> {
    return readRows(await scopeFor(this.boundScope), this.record, options);
  }

  /** One column's values, in the object's order. */
  async column(name: string): Promise<unknown[]> {
    derivations.checkColumnName(name);
    const ds = await scopeFor(this.boundScope);
    const order = this.record.sortSql ? raw(` ORDER BY ${this.record.sortSql}`) : raw("");
    const rows = await selectRows(ds, this.record, sql`SELECT ${ident(name)} FROM ${qualified(ds, this.record.table)}${order}`);
    return rows.map((r) => r[name]);
  }

  /** One aggregate over the object, e.g. scalar("sum(amount)"). */
  async scalar(expression: string): Promise<unknown> {
    return readScalar(await scopeFor(this.boundScope), this.record, derivations.checkExpression(expression) as Sql);
  }

  async count(): Promise<number> {
    return Number(await readScalar(await scopeFor(this.boundScope), this.record, raw("count()")));
  }

  /** Rows in batches, for results too large to hold at once. */
  async *stream(batchSize = 10_000): AsyncGenerator<Record<string, unknown>[]> {
    const ds = await scopeFor(this.boundScope);
    // A total order makes the pages stable between queries: the object's sort, then every column
    // as a tie-breaker (a sort with ties alone would let rows move between pages).
    const everyColumn = (await describeColumns(ds, this.record)).map((c) => ident(c.name).text).join(", ");
    const order = this.record.sortSql ? `${this.record.sortSql}, ${everyColumn}` : everyColumn;
    for (let offset = 0; ; offset += batchSize) {
      const batch = await selectRows(ds, this.record, sql`SELECT * FROM ${qualified(ds, this.record.table)} ORDER BY ${raw(order)} LIMIT ${offset}, ${batchSize}`);
      if (batch.length > 0) yield batch;
      if (batch.length < batchSize) return;
    }
  }

  async columns(): Promise<{ name: string; type: string }[]> {
    return describeColumns(await scopeFor(this.boundScope), this.record);
  }
}

export type Columns = Record<string, readonly unknown[]>;
export type Rows = readonly Record<string, unknown>[];

/** CONTRACT §5 createObject: from column arrays ({a: [1, 2]}) or rows ([{a: 1}, {a: 2}]). */
export async function createObject(data: Columns | Rows, options: CreateOptions = {}, scope?: DataScope): Promise<DataObject> {
  const ds = await scopeFor(scope);
  const record = Array.isArray(data) ? await createFromRows(ds, data as Rows, options) : await createFromColumns(ds, data as Columns, options);
  return new DataObject(record, scope);
}

/** A new object from a CSV/TSV/JSONL/Parquet file or URL. */
export async function loadObject(source: string, options: FileOptions = {}, scope?: DataScope): Promise<DataObject> {
  return new DataObject(await createFromFile(await scopeFor(scope), source, options), scope);
}

/** A new object from SQL over others: query("SELECT … FROM {sales}", {sales}). */
export async function queryObject(query: string, objects: Record<string, DataObject>, placement: Placement = {}, scope?: DataScope): Promise<DataObject> {
  const records = Object.fromEntries(Object.entries(objects).map(([k, o]) => [k, o.record]));
  const bound = scope ?? Object.values(objects)[0]?.boundScope;
  return new DataObject(await createFromQuery(await scopeFor(bound), query, records, placement), bound);
}

/** An existing object by name: this job's object of that name, else the global one. */
export async function getObject(name: string, scope?: DataScope): Promise<DataObject> {
  return new DataObject(await findObjectRecord(await scopeFor(scope), name), scope);
}
