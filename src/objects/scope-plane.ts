// The data plane over a DataScope of this thread: each call of data-plane.ts run against the
// stores, with the acting job, task and attempt recorded (the worker's side of a task thread's
// channel, and scripts or tests that hold a scope themselves).

import type { Sql } from "../data/sql.js";
import { ident, raw, sql } from "../data/sql.js";
import * as derivations from "../data/derive.js";
import { ServiceError } from "../core/errors.js";
import { isUnknownTable } from "../data/client.js";
import { compileChain, explainChainFailure, readSourceOf } from "./chains.js";
import type { ChainNode, Columns, DataPlane, Rows } from "./data-plane.js";
import { createFromFile } from "./ingest.js";
import { type DataScope, findObjectRecord, wasDeleted } from "./object-registry.js";
import { type ReadSource, createFromColumns, createFromQuery, createFromRows, derive, insertRows, readRows, readScalar, selectRows } from "./tables.js";

/**
 * Runs a read of `node`; a chain that ClickHouse refuses is reported by the step that broke it.
 */
async function reading<T>(ds: DataScope, node: ChainNode, read: (source: ReadSource) => Promise<T>): Promise<T> {
  const source = await readSourceOf(ds, node);
  try {
    return await read(source);
  } catch (error) {
    if (source.chain) throw await explainChainFailure(ds, source.chain, error);
    // Deleted (delete_object, a purge) while this reader held it: said so, not as ClickHouse's
    // "unknown table expression" with its guess at another table.
    throw ("object" in node && isUnknownTable(error) ? await wasDeleted(ds, node.object) : undefined) ?? error;
  }
}

/** The data plane over a DataScope of this thread: the stores, and who acts. */
export function scopePlane(ds: DataScope): DataPlane {
  return {
    create: (data, options) => (Array.isArray(data) ? createFromRows(ds, data as Rows, options) : createFromColumns(ds, data as Columns, options)),
    load: (source, options) => createFromFile(ds, source, options),
    query: (query, inputs, placement) => createFromQuery(ds, query, inputs, placement),
    find: (name, scope) => findObjectRecord(ds, name, scope),
    async derive(node, placement) {
      const chain = await compileChain(ds, node);
      try {
        return await derive(ds, chain.operation, chain.leaves, { select: chain.select, lineage: chain.lineage, sortSql: chain.sortSql }, placement);
      } catch (error) {
        // Name clashes and the like are the object's, not a step's: only ClickHouse's refusals are explained.
        if (error instanceof ServiceError) throw error;
        throw await explainChainFailure(ds, chain, error);
      }
    },
    insert: (record, rows) => insertRows(ds, record, rows),
    rows: (node, options) => reading(ds, node, (source) => readRows(ds, source, options)),
    column(node, name) {
      derivations.checkColumnName(name);
      return reading(ds, node, async (source) => {
        const order = source.sortSql ? raw(` ORDER BY ${source.sortSql}`) : raw("");
        const rows = await selectRows(ds, source, { column: name }, order);
        return rows.map((r) => r[name]);
      });
    },
    scalar: (node, expression) => reading(ds, node, (source) => readScalar(ds, source, derivations.checkExpression(expression) as Sql)),
    count: (node) => reading(ds, node, async (source) => Number(await readScalar(ds, source, raw("count()")))),
    page: (node, offset, size) =>
      reading(ds, node, async (source) => {
        // A total order makes the pages stable between queries: the source's sort, then every
        // column as a tie-breaker (a sort with ties alone would let rows move between pages).
        const everyColumn = (await source.columns()).map((c) => ident(c.name).text).join(", ");
        const order = source.sortSql ? `${source.sortSql}, ${everyColumn}` : everyColumn;
        return selectRows(ds, source, "*", sql` ORDER BY ${raw(order)} LIMIT ${offset}, ${size}`);
      }),
    columns: (node) => reading(ds, node, (source) => source.columns()),
  };
}

