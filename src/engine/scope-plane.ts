// The data plane over a DataScope of this thread: each call of data-plane.ts run against the
// stores, with the acting job, task and attempt recorded (the worker's side of a task thread's
// channel, and scripts or tests that hold a scope themselves).

import type { Sql } from "../data/sql.js";
import { ident, raw, sql } from "../data/sql.js";
import * as derivations from "../data/derive.js";
import type { Columns, DataPlane, DeriveStep, Rows } from "./data-plane.js";
import { createFromFile } from "./ingest.js";
import { type DataScope, type ObjectRecord, describeColumns, findObjectRecord, qualified, sourceOf } from "./object-registry.js";
import { createFromColumns, createFromQuery, createFromRows, derive, insertRows, readRows, readScalar, selectRows } from "./objects.js";

function derivationOf(step: DeriveStep, sources: derivations.Source[], first: ObjectRecord): derivations.Derivation {
  const [src] = sources as [derivations.Source, ...derivations.Source[]];
  switch (step.op) {
    case "filter":
      return derivations.filter(src, step.condition);
    case "select":
      return derivations.project(src, step.outputs);
    case "group_by":
      return derivations.aggregate(src, step.keys, step.aggregates);
    case "join":
      return derivations.join(src, sources[1]!, step.on, step.how, step.suffix);
    case "union":
      return derivations.union(sources);
    case "sort":
      return derivations.sort(src, step.keys);
    case "limit":
      return derivations.limit(src, step.n, first.sortSql);
    case "distinct":
      return derivations.distinct(src, step.columns);
  }
}

/** The data plane over a DataScope of this thread: the stores, and who acts. */
export function scopePlane(ds: DataScope): DataPlane {
  return {
    create: (data, options) => (Array.isArray(data) ? createFromRows(ds, data as Rows, options) : createFromColumns(ds, data as Columns, options)),
    load: (source, options) => createFromFile(ds, source, options),
    query: (query, inputs, placement) => createFromQuery(ds, query, inputs, placement),
    find: (name) => findObjectRecord(ds, name),
    async derive(step, inputs, placement) {
      const sources = await Promise.all(inputs.map((record) => sourceOf(ds, record)));
      return derive(ds, step.op, inputs, derivationOf(step, sources, inputs[0]!), placement);
    },
    insert: (record, rows) => insertRows(ds, record, rows),
    rows: (record, options) => readRows(ds, record, options),
    async column(record, name) {
      derivations.checkColumnName(name);
      const order = record.sortSql ? raw(` ORDER BY ${record.sortSql}`) : raw("");
      const rows = await selectRows(ds, record, sql`SELECT ${ident(name)} FROM ${qualified(ds, record.table)}${order}`);
      return rows.map((r) => r[name]);
    },
    scalar: (record, expression) => readScalar(ds, record, derivations.checkExpression(expression) as Sql),
    count: async (record) => Number(await readScalar(ds, record, raw("count()"))),
    async page(record, offset, size) {
      // A total order makes the pages stable between queries: the object's sort, then every column
      // as a tie-breaker (a sort with ties alone would let rows move between pages).
      const everyColumn = (await describeColumns(ds, record)).map((c) => ident(c.name).text).join(", ");
      const order = record.sortSql ? `${record.sortSql}, ${everyColumn}` : everyColumn;
      return selectRows(ds, record, sql`SELECT * FROM ${qualified(ds, record.table)} ORDER BY ${raw(order)} LIMIT ${offset}, ${size}`);
    },
    columns: (record) => describeColumns(ds, record),
  };
}

