// OpenLineage dataset names (its naming spec): ClickHouse tables, local files and URLs.

import type { ColumnTarget } from "../../core/config.js";
import type { DatasetRef } from "./facets.js";

/**
 * `clickhouse://host:port` of the configured server (credentials and database left out: the
 * database is part of each table's name). The embedded chDB has no address: `clickhouse://localhost`.
 */
export function columnStoreNamespace(target: ColumnTarget): string {
  if (target.engine !== "server") return "clickhouse://localhost";
  const url = new URL(target.location);
  const port = url.port || (url.protocol === "https:" ? "8443" : "8123");
  return `clickhouse://${url.hostname}:${port}`;
}

export interface TableNaming {
  namespace: string;
  database: string;
}

export const tableDataset = (naming: TableNaming, table: string): DatasetRef => ({ namespace: naming.namespace, name: `${naming.database}.${table}` });

/** A load's source: a file is `file` + its absolute path; a URL is `scheme://host[:port]` + path and query. */
export function sourceDataset(kind: string, location: string): DatasetRef {
  if (kind !== "url") return { namespace: "file", name: location };
  try {
    const url = new URL(location);
    return { namespace: `${url.protocol}//${url.host}`, name: `${url.pathname}${url.search}` };
  } catch {
    // Recorded as given; a location that no longer parses still names something.
    return { namespace: "url", name: location };
  }
}
