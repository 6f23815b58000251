// DataObject: the handle task code holds on a data object (CONTRACT §5), and DataChain: derivations
// chained on it, made into one object by one ClickHouse statement when awaited, which records the
// operation, its inputs and the acting task; reads run SELECTs. Each goes through the data plane of the running task (over its thread's
// channel) or, outside tasks, the plane the object was made with (scopePlane(ds) in scripts and
// tests). Returned from a task it travels as {"object": "<name>"}.

import * as derivations from "../data/derive.js";
import type { ChainNode, Columns, DataPlane, DeriveStep, Rows } from "./data-plane.js";
import { currentPlane } from "./current-plane.js";
import type { FileOptions } from "./ingest.js";
import type { CreateOptions, ObjectRecord, Placement } from "./object-registry.js";

export type { Columns, Rows } from "./data-plane.js";

/** The data plane of the running task; objects made outside one use the plane they were made with. */
function planeFor(fallback?: DataPlane): DataPlane {
  const plane = currentPlane();
  if (plane) return plane;
  if (fallback) return fallback;
  throw new Error("data objects are made and used inside a job's tasks");
}

const isPlacement = (value: unknown): value is Placement =>
  typeof value === "object" && value !== null && !(value instanceof DataSource) && !Array.isArray(value);

/** A chain's inputs: objects and other chains (join, union). */
type Chainable = DataObject | DataChain;

/**
 * What objects and chains share: the derivations, each returning a chain (a description, nothing
 * runs until it is awaited), and the reads, which run on the source as it is without making it.
 */
abstract class DataSource {
  /** This source as data for the plane. */
  abstract node(): ChainNode;
  protected abstract get plane(): DataPlane;
  /** The plane carried to chains made from this source (see DataObject.boundPlane). */
  protected abstract get bound(): DataPlane | undefined;

  private chain(step: DeriveStep, others: Chainable[], placement: Placement | undefined): DataChain {
    return new DataChain({ step, inputs: [this.node(), ...others.map((o) => o.node())] }, placement, this.bound ?? others.find((o) => o.boundPlane)?.boundPlane);
  }

  /** Rows where the ClickHouse condition holds. */
  filter(condition: string, placement?: Placement): DataChain {
    return this.chain({ op: "filter", condition }, [], placement);
  }

  /** Columns computed by ClickHouse expressions: {out: "amount * 1.2"}; or a list of columns to keep. */
  select(outputs: Record<string, string> | string[], placement?: Placement): DataChain {
    const map = Array.isArray(outputs) ? Object.fromEntries(outputs.map((c) => [c, derivations.checkColumnName(c)])) : outputs;
    return this.chain({ op: "select", outputs: map }, [], placement);
  }

  /** Groups by key columns; `.agg({total: "sum(amount)"})` makes the chain's step. */
  groupBy(...keys: string[]): { agg(aggregates: Record<string, string>, placement?: Placement): DataChain } {
    return { agg: (aggregates, placement) => this.chain({ op: "group_by", keys, aggregates }, [], placement) };
  }

  /** Joins on shared key columns; right-side name clashes get `suffix` (default "_right"). */
  join(other: Chainable, options: { on: string | string[]; how?: derivations.JoinKind; suffix?: string }, placement?: Placement): DataChain {
    const on = Array.isArray(options.on) ? options.on : [options.on];
    return this.chain({ op: "join", on, how: options.how ?? "inner", suffix: options.suffix }, [other], placement);
  }

  /** All rows of this and the other sources (same columns). */
  union(...others: (Chainable | Placement)[]): DataChain {
    const placement = isPlacement(others[others.length - 1]) ? (others.pop() as Placement) : undefined;
    return this.chain({ op: "union" }, others as Chainable[], placement);
  }

  /** Sorted by columns ("amount DESC"); reads of the result keep the order. */
  sort(...keys: (string | Placement)[]): DataChain {
    const placement = isPlacement(keys[keys.length - 1]) ? (keys.pop() as Placement) : undefined;
    return this.chain({ op: "sort", keys: keys as string[] }, [], placement);
  }

  /** The first n rows (in sort order when sorted). */
  limit(n: number, placement?: Placement): DataChain {
    return this.chain({ op: "limit", n }, [], placement);
  }

  /** Distinct rows over the given columns (all when none). */
  distinct(columns: string[] = [], placement?: Placement): DataChain {
    return this.chain({ op: "distinct", columns }, [], placement);
  }

  rows(options: { limit?: number; offset?: number } = {}): Promise<Record<string, unknown>[]> {
    return this.plane.rows(this.node(), options);
  }

  /** One column's values, in the source's order. */
  column(name: string): Promise<unknown[]> {
    return this.plane.column(this.node(), name);
  }

  /** One aggregate over the source, e.g. scalar("sum(amount)"). */
  scalar(expression: string): Promise<unknown> {
    return this.plane.scalar(this.node(), expression);
  }

  count(): Promise<number> {
    return this.plane.count(this.node());
  }

  /** Rows in batches, for results too large to hold at once. */
  async *stream(batchSize = 10_000): AsyncGenerator<Record<string, unknown>[]> {
    // A batch of 0 never ends (no batch is ever shorter than it).
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new TypeError(`stream's batch size must be a positive integer, got ${String(batchSize)}`);
    const plane = this.plane;
    const node = this.node();
    for (let offset = 0; ; offset += batchSize) {
      const batch = await plane.page(node, offset, batchSize);
      if (batch.length > 0) yield batch;
      if (batch.length < batchSize) return;
    }
  }

  columns(): Promise<{ name: string; type: string }[]> {
    return this.plane.columns(this.node());
  }
}

export class DataObject extends DataSource {
  constructor(
    readonly record: ObjectRecord,
    /** The plane used outside tasks (scripts, tests); inside a task its own data plane is used. */
    readonly boundPlane?: DataPlane,
  ) {
    super();
  }

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

  node(): ChainNode {
    return { object: this.record };
  }

  protected get plane(): DataPlane {
    return planeFor(this.boundPlane);
  }

  protected get bound(): DataPlane | undefined {
    return this.boundPlane;
  }

  /** Appends rows; returns how many. */
  insert(rows: Record<string, unknown>[]): Promise<number> {
    return this.plane.insert(this.record, rows);
  }
}

/**
 * A chain of derivations not yet run (CONTRACT §5): `await sales.filter(…).select(…, {name})`
 * compiles the whole chain into one statement and makes one object, whose upstream is the chain's
 * source objects; no intermediate table is made. Reads (`rows()`, `count()`, …) run on the chain
 * as a query. A placement goes on the last step: an earlier one would name an object never made.
 */
export class DataChain extends DataSource implements PromiseLike<DataObject> {
  private made?: Promise<DataObject>;

  constructor(
    private readonly chainNode: ChainNode,
    private readonly placement: Placement | undefined,
    readonly boundPlane: DataPlane | undefined,
  ) {
    super();
  }

  node(): ChainNode {
    if (this.placement) {
      throw new TypeError(`a placement (${JSON.stringify(this.placement)}) goes on a chain's last step; await the chain there to keep that object`);
    }
    return this.chainNode;
  }

  protected get plane(): DataPlane {
    return planeFor(this.boundPlane);
  }

  protected get bound(): DataPlane | undefined {
    return this.boundPlane;
  }

  /** Makes the chain into its object (once, however often it is awaited). */
  then<A = DataObject, B = never>(onMade?: ((object: DataObject) => A | PromiseLike<A>) | null, onFailed?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    this.made ??= (async () => new DataObject(await this.plane.derive(this.chainNode, this.placement), this.boundPlane))();
    return this.made.then(onMade, onFailed);
  }

  catch<B = never>(onFailed: (reason: unknown) => B | PromiseLike<B>): Promise<DataObject | B> {
    return this.then(undefined, onFailed);
  }

  /** A chain is not an object yet: returned or passed on unawaited, it would mean nothing. */
  toJSON(): never {
    throw new TypeError("a data chain is a description, not an object: await it (which makes its object) before returning it or passing it to a task");
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
