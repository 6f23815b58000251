// DataObject: the handle task code holds on a data object (CONTRACT §5). Every method that makes a
// new object runs one ClickHouse statement and records the operation, its inputs and the acting
// task; reads run SELECTs. Each goes through the data plane of the running task (over its thread's
// channel) or, outside tasks, the plane the object was made with (scopePlane(ds) in scripts and
// tests). Returned from a task it travels as {"object": "<name>"}.

import * as derivations from "../data/derive.js";
import type { Columns, DataPlane, DeriveStep, Rows } from "./data-plane.js";
import { currentExecution } from "./execution.js";
import type { FileOptions } from "./ingest.js";
import type { CreateOptions, ObjectRecord, Placement } from "./object-registry.js";

export type { Columns, Rows } from "./data-plane.js";

/** The data plane of the running task; objects made outside one use the plane they were made with. */
function planeFor(fallback?: DataPlane): DataPlane {
  const execution = currentExecution();
  if (execution) return execution.plane;
  if (fallback) return fallback;
  throw new Error("data objects are made and used inside a job's tasks");
}

const isPlacement = (value: unknown): value is Placement =>
  typeof value === "object" && value !== null && !(value instanceof DataObject) && !Array.isArray(value);

export class DataObject {
  constructor(
    readonly record: ObjectRecord,
    /** The plane used outside tasks (scripts, tests); inside a task its own data plane is used. */
    readonly boundPlane?: DataPlane,
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

  private get plane(): DataPlane {
    return planeFor(this.boundPlane);
  }

  private async derived(step: DeriveStep, inputs: DataObject[], placement?: Placement): Promise<DataObject> {
    const record = await this.plane.derive(step, inputs.map((o) => o.record), placement);
    return new DataObject(record, this.boundPlane);
  }

  /** Rows where the ClickHouse condition holds. */
  filter(condition: string, placement?: Placement): Promise<DataObject> {
    return this.derived({ op: "filter", condition }, [this], placement);
  }

  /** Columns computed by ClickHouse expressions: {out: "amount * 1.2"}; or a list of columns to keep. */
  select(outputs: Record<string, string> | string[], placement?: Placement): Promise<DataObject> {
    const map = Array.isArray(outputs) ? Object.fromEntries(outputs.map((c) => [c, derivations.checkColumnName(c)])) : outputs;
    return this.derived({ op: "select", outputs: map }, [this], placement);
  }

  /** Groups by key columns; `.agg({total: "sum(amount)"})` makes the object. */
  groupBy(...keys: string[]): { agg(aggregates: Record<string, string>, placement?: Placement): Promise<DataObject> } {
    return { agg: (aggregates, placement) => this.derived({ op: "group_by", keys, aggregates }, [this], placement) };
  }

  /** Joins on shared key columns; right-side name clashes get `suffix` (default "_right"). */
  join(other: DataObject, options: { on: string | string[]; how?: derivations.JoinKind; suffix?: string }, placement?: Placement): Promise<DataObject> {
    const on = Array.isArray(options.on) ? options.on : [options.on];
    return this.derived({ op: "join", on, how: options.how ?? "inner", suffix: options.suffix }, [this, other], placement);
  }

  /** All rows of this and the other objects (same columns). */
  union(...others: (DataObject | Placement)[]): Promise<DataObject> {
    const placement = isPlacement(others[others.length - 1]) ? (others.pop() as Placement) : undefined;
    return this.derived({ op: "union" }, [this, ...(others as DataObject[])], placement);
  }

  /** Sorted by columns ("amount DESC"); reads of the result keep the order. */
  sort(...keys: (string | Placement)[]): Promise<DataObject> {
    const placement = isPlacement(keys[keys.length - 1]) ? (keys.pop() as Placement) : undefined;
    return this.derived({ op: "sort", keys: keys as string[] }, [this], placement);
  }

  /** The first n rows (in sort order when sorted). */
  limit(n: number, placement?: Placement): Promise<DataObject> {
    return this.derived({ op: "limit", n }, [this], placement);
  }

  /** Distinct rows over the given columns (all when none). */
  distinct(columns: string[] = [], placement?: Placement): Promise<DataObject> {
    return this.derived({ op: "distinct", columns }, [this], placement);
  }

  /** Appends rows; returns how many. */
  insert(rows: Record<string, unknown>[]): Promise<number> {
    return this.plane.insert(this.record, rows);
  }

  rows(options: { limit?: number; offset?: number } = {}): Promise<Record<string, unknown>[]> {
    return this.plane.rows(this.record, options);
  }

  /** One column's values, in the object's order. */
  column(name: string): Promise<unknown[]> {
    return this.plane.column(this.record, name);
  }

  /** One aggregate over the object, e.g. scalar("sum(amount)"). */
  scalar(expression: string): Promise<unknown> {
    return this.plane.scalar(this.record, expression);
  }

  count(): Promise<number> {
    return this.plane.count(this.record);
  }

  /** Rows in batches, for results too large to hold at once. */
  async *stream(batchSize = 10_000): AsyncGenerator<Record<string, unknown>[]> {
    const plane = this.plane;
    for (let offset = 0; ; offset += batchSize) {
      const batch = await plane.page(this.record, offset, batchSize);
      if (batch.length > 0) yield batch;
      if (batch.length < batchSize) return;
    }
  }

  columns(): Promise<{ name: string; type: string }[]> {
    return this.plane.columns(this.record);
  }
}

/** CONTRACT §5 createObject: from column arrays ({a: [1, 2]}) or rows ([{a: 1}, {a: 2}]). */
export async function createObject(data: Columns | Rows, options: CreateOptions = {}, plane?: DataPlane): Promise<DataObject> {
  return new DataObject(await planeFor(plane).create(data, options), plane);
}

/** A new object from a CSV/TSV/JSONL/Parquet file or URL. */
export async function loadObject(source: string, options: FileOptions = {}, plane?: DataPlane): Promise<DataObject> {
  return new DataObject(await planeFor(plane).load(source, options), plane);
}

/** A new object from SQL over others: query("SELECT … FROM {sales}", {sales}). */
export async function queryObject(query: string, objects: Record<string, DataObject>, placement: Placement = {}, plane?: DataPlane): Promise<DataObject> {
  const records = Object.fromEntries(Object.entries(objects).map(([k, o]) => [k, o.record]));
  const bound = plane ?? Object.values(objects)[0]?.boundPlane;
  return new DataObject(await planeFor(bound).query(query, records, placement), bound);
}

/** An existing object by name: this job's object of that name, else the global one. */
export async function getObject(name: string, plane?: DataPlane): Promise<DataObject> {
  return new DataObject(await planeFor(plane).find(name), plane);
}
