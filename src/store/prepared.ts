// Queries built and compiled once, executed many times with new values: for the statements the
// engine and the reads run thousands of times a second.

import type { CompiledQuery, QueryResult } from "kysely";
import { type Store, isPostgres } from "./db.js";

/** Stands for a named value while the query is built; its place in the parameters is kept. */
class Slot {
  constructor(readonly name: string) {}
}

/** The values' stand-ins a build function receives: `values.id` is the slot named "id". */
const SLOTS = new Proxy({}, { get: (_, name) => new Slot(String(name)) });

/** A query builder (its compile takes nothing) or a raw `sql` template (its compile takes the db). */
interface Buildable<R> {
  compile(db: Store): CompiledQuery<R>;
}

export interface PreparedQuery<V, R> {
  /** Every row. */
  rows(db: Store, values: V): Promise<R[]>;
  /** The first row, if any. */
  first(db: Store, values: V): Promise<R | undefined>;
  /** How many rows an insert, update or delete changed. */
  affected(db: Store, values: V): Promise<number>;
}

/** Which of a call's values are given (not undefined): the shape of a query with optional filters. */
export type Given<V> = { readonly [K in keyof V]-?: boolean };

/**
 * Kysely builds a query's tree and compiles it to SQL at every execution: 14 µs per statement,
 * measured, against 4-7 µs for executing it (SQLite, a guarded update by key). A prepared query is
 * built once per dialect and shape with stand-ins for its values, then executed with the values
 * put in their places. `build` may choose clauses by `given` (a filter is added when its value is
 * given: each combination is built once) but never by a value itself, and each value must reach
 * the SQL as one parameter: not inside a list whose length varies (`in`), nor read while building
 * (`prefix.length`, a `BigInt(…)` of it).
 */
export function prepared<V extends object, R>(build: (db: Store, values: V, given: Given<V>) => Buildable<R>): PreparedQuery<V, R> {
  const compiled = new Map<string, CompiledQuery<R>>();
  const execute = (db: Store, values: V): Promise<QueryResult<R>> => {
    let shape = isPostgres(db) ? "postgres" : "sqlite";
    for (const name in values) if (values[name] !== undefined) shape += `,${name}`;
    let query = compiled.get(shape);
    if (!query) {
      const given = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value !== undefined])) as Given<V>;
      compiled.set(shape, (query = build(db, SLOTS as V, given).compile(db)));
    }
    const parameters = query.parameters.map((parameter) => (parameter instanceof Slot ? valueOf(values, parameter.name) : parameter));
    // Written out, not `{ ...query, parameters }`: V8 spreads into a literal with more fields slowly.
    return db.executeQuery<R>({ sql: query.sql, query: query.query, queryId: query.queryId, parameters });
  };
  return {
    rows: async (db, values) => (await execute(db, values)).rows,
    first: async (db, values) => (await execute(db, values)).rows[0],
    affected: async (db, values) => Number((await execute(db, values)).numAffectedRows ?? 0n),
  };
}

function valueOf(values: object, name: string): unknown {
  const value = (values as Record<string, unknown>)[name];
  // A missing value would bind as NULL and quietly match nothing.
  if (value === undefined) throw new Error(`prepared query: no value for "${name}"`);
  return value;
}
