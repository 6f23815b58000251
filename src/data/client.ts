// One column-store client over @clickhouse/client, for chDB in-process (local mode) or a ClickHouse
// server over HTTP (distributed mode). Everything above this file speaks SQL text built by sql.ts.

import { mkdirSync } from "node:fs";
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from "@clickhouse/client";
import type { ColumnTarget } from "../core/config.js";
import { type Sql, ident, sql } from "./sql.js";

export interface ColumnStore {
  readonly engine: "chdb" | "server";
  readonly database: string;
  /** Rows of a SELECT, parsed from JSONEachRow. */
  query<T = Record<string, unknown>>(statement: Sql): Promise<T[]>;
  /** A statement without a result (DDL, INSERT … SELECT). */
  command(statement: Sql): Promise<void>;
  /** The server's version, e.g. "18.16.1"; probed once. */
  version(): Promise<string>;
  close(): Promise<void>;
}

export async function openColumnStore(target: ColumnTarget): Promise<ColumnStore> {
  const client = target.engine === "chdb" ? await openChdb(target.location) : openServer(target.location);
  const store = wrap(client, target);
  await store.command(sql`CREATE DATABASE IF NOT EXISTS ${ident(target.database)}`);
  return store;
}

// Errors reach our callers as exceptions; the client's own console logging would only duplicate them.
const QUIET = { level: ClickHouseLogLevel.OFF };

async function openChdb(path: string): Promise<ClickHouseClient> {
  mkdirSync(path, { recursive: true });
  // Loaded lazily: the native engine is large and only local mode needs it.
  const { createChdbConnection } = await import("chdb/connection");
  return createClient({ connection: createChdbConnection({ path }), log: QUIET } as Parameters<typeof createClient>[0]);
}

function openServer(location: string): ClickHouseClient {
  const url = new URL(location);
  // The path names the database (CONTRACT §1); the client wants the server root.
  const username = decodeURIComponent(url.username) || "default";
  const password = decodeURIComponent(url.password);
  url.username = "";
  url.password = "";
  url.pathname = "/";
  return createClient({ url: url.toString(), username, password, request_timeout: 300_000, log: QUIET });
}

function wrap(client: ClickHouseClient, target: ColumnTarget): ColumnStore {
  let versionPromise: Promise<string> | undefined;
  return {
    engine: target.engine,
    database: target.database,
    async query<T>(statement: Sql): Promise<T[]> {
      const result = await client.query({ query: statement.text, format: "JSONEachRow" });
      return (await result.json()) as T[];
    },
    async command(statement: Sql): Promise<void> {
      await client.command({ query: statement.text });
    },
    version(): Promise<string> {
      versionPromise ??= client
        .query({ query: "SELECT version() AS v", format: "JSONEachRow" })
        .then((r) => r.json<{ v: string }>())
        .then((rows) => rows[0]?.v ?? "0");
      return versionPromise;
    },
    close: () => client.close(),
  };
}
