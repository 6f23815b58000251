// Facts about tables read from ClickHouse's system tables: sizes from system.parts, columns from
// system.columns, engine and sorting key from system.tables.

import type { ColumnStore } from "./client.js";
import { sql } from "./sql.js";
import { typeShape } from "./types.js";

export interface TableStats {
  rowCount: number;
  sizeBytes: number;
}

export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  arrayDepth: number;
  lowCardinality: boolean;
}

export interface TableSchema {
  columns: ColumnInfo[];
  orderBy: string | null;
  engine: string;
}

/** Row counts and sizes of many tables in one query; a table without parts counts zero. */
export async function readTableStats(store: ColumnStore, tables: string[]): Promise<Map<string, TableStats>> {
  const stats = new Map<string, TableStats>();
  if (tables.length === 0) return stats;
  const rows = await store.query<{ table: string; rows: string | number; bytes: string | number }>(sql`
    SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes
    FROM system.parts
    WHERE database = ${store.database} AND active AND has(${tables}, table)
    GROUP BY table`);
  for (const row of rows) stats.set(row.table, { rowCount: Number(row.rows), sizeBytes: Number(row.bytes) });
  return stats;
}

export async function readTableSchema(store: ColumnStore, table: string): Promise<TableSchema | null> {
  const tables = await store.query<{ engine: string; sorting_key: string }>(
    sql`SELECT engine, sorting_key FROM system.tables WHERE database = ${store.database} AND name = ${table}`,
  );
  const info = tables[0];
  if (!info) return null;
  const columns = await store.query<{ name: string; type: string }>(
    // No ORDER BY position: 18.16 lacks that column, and both list columns in definition order.
    sql`SELECT name, type FROM system.columns WHERE database = ${store.database} AND table = ${table}`,
  );
  return { columns: columns.map((c) => describeColumn(c.name, c.type)), orderBy: info.sorting_key || null, engine: info.engine };
}

/** A column's ColumnView facts from its ClickHouse type. */
export function describeColumn(name: string, type: string): ColumnInfo {
  const { base, nullable, arrayDepth, lowCardinality } = typeShape(type);
  return { name, type: base, nullable, arrayDepth, lowCardinality };
}
