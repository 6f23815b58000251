// The data plane as task code reaches it: every data-object operation as one call that takes and
// returns plain data (records, rows, options), so the same calls run against a DataScope
// (scope-plane.ts, where the stores are) or travel over a task thread's message channel to the
// thread that holds the column store (chDB's session is one per process). This file stays light:
// task threads import it, and nothing of the stores.

import type { JoinKind } from "../data/derive.js";
import type { FileOptions } from "./ingest.js";
import type { ColumnList, CreateOptions, ObjectRecord, Placement } from "./object-registry.js";

export type Columns = Record<string, readonly unknown[]>;
export type Rows = readonly Record<string, unknown>[];
type Row = Record<string, unknown>;

/** One derivation step as data (a closure cannot cross a thread). */
export type DeriveStep =
  | { op: "filter"; condition: string }
  | { op: "select"; outputs: Record<string, string> }
  | { op: "group_by"; keys: string[]; aggregates: Record<string, string> }
  | { op: "join"; on: string[]; how: JoinKind; suffix?: string }
  | { op: "union" }
  | { op: "sort"; keys: string[] }
  | { op: "limit"; n: number }
  | { op: "distinct"; columns: string[] };

/**
 * What a read or a derivation works on, as data: a stored object, or a step over other nodes (a
 * fluent chain not yet made into an object: see chains.ts).
 */
export type ChainNode = { object: ObjectRecord } | { step: DeriveStep; inputs: ChainNode[] };

export interface DataPlane {
  create(data: Columns | Rows, options: CreateOptions): Promise<ObjectRecord>;
  load(source: string, options: FileOptions): Promise<ObjectRecord>;
  query(query: string, inputs: Record<string, ObjectRecord>, placement: Placement): Promise<ObjectRecord>;
  /** By name as the running job sees it (its own object first); `global`: the global one. */
  find(name: string, scope?: "global"): Promise<ObjectRecord>;
  /** Makes a chain into one object with one statement. */
  derive(chain: ChainNode, placement: Placement | undefined): Promise<ObjectRecord>;
  insert(record: ObjectRecord, rows: Row[]): Promise<number>;
  rows(source: ChainNode, options: { limit?: number; offset?: number }): Promise<Row[]>;
  column(source: ChainNode, name: string): Promise<unknown[]>;
  scalar(source: ChainNode, expression: string): Promise<unknown>;
  count(source: ChainNode): Promise<number>;
  /** Rows `offset`..`offset + size` in a total order (the source's sort, then every column). */
  page(source: ChainNode, offset: number, size: number): Promise<Row[]>;
  columns(source: ChainNode): Promise<ColumnList>;
}

const PLANE_METHODS: readonly (keyof DataPlane)[] = [
  "create",
  "load",
  "query",
  "find",
  "derive",
  "insert",
  "rows",
  "column",
  "scalar",
  "count",
  "page",
  "columns",
];

/** A data plane whose every call goes through `call` (a task thread's channel to its worker). */
export function remotePlane(call: (method: keyof DataPlane, args: unknown[]) => Promise<unknown>): DataPlane {
  return Object.fromEntries(PLANE_METHODS.map((method) => [method, (...args: unknown[]) => call(method, args)])) as unknown as DataPlane;
}

/** Runs a call that came over a channel, refusing anything that is not a plane method. */
export function dispatchPlaneCall(plane: DataPlane, method: string, args: unknown[]): Promise<unknown> {
  if (!(PLANE_METHODS as readonly string[]).includes(method)) return Promise.reject(new Error(`no data operation "${method}"`));
  return (plane[method as keyof DataPlane] as (...a: unknown[]) => Promise<unknown>)(...args);
}
