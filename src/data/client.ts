// One column-store client over @clickhouse/client, for chDB in-process (local mode) or a ClickHouse
// server over HTTP (distributed mode). Everything above this file speaks SQL text built by sql.ts.

import { PRIVATE_FILE_MODE, makePrivateDir } from "../core/private-files.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { type ClickHouseClient, ClickHouseLogLevel, type ClickHouseSettings, createClient } from "@clickhouse/client";
import { type ColumnTarget, redactUrl } from "../core/config.js";
import { unavailable } from "../core/errors.js";
import { type Sql, ident, raw, sql } from "./sql.js";
import { type Features, featuresOf } from "./types.js";

export type RawFormat = "CSVWithNames" | "TabSeparatedWithNames" | "JSONEachRow" | "Parquet";

export interface ColumnStore {
  readonly engine: "chdb" | "server";
  readonly database: string;
  /** Rows of a SELECT, parsed from JSONEachRow. */
  query<T = Record<string, unknown>>(statement: Sql): Promise<T[]>;
  /** A statement without a result (DDL, INSERT … SELECT). */
  command(statement: Sql): Promise<void>;
  /** Appends rows (already JSON-ready, or written as JSON text) to a table of this database. */
  insertRows(table: string, rows: readonly (Record<string, unknown> | JsonLine)[]): Promise<void>;
  /** Appends a payload in a raw format (a file or a download) to a table of this database. */
  insertRaw(table: string, payload: Readable, format: RawFormat): Promise<void>;
  /** The server's version, e.g. "18.16.1"; probed once. */
  version(): Promise<string>;
  /** What this server supports (probed once, from the version). */
  features(): Promise<Features>;
  close(): Promise<void>;
}

/** A row already written as JSON text (decimals' digits unquoted: decimalRowJson), inserted as it is. */
export class JsonLine {
  constructor(readonly text: string) {}
}

/**
 * A result column named with this prefix is read as the text of its numbers: a wide decimal's
 * digits, which JSON.parse would round. (ClickHouse 18.16's toString of a Decimal128 of more than
 * about 20 digits writes NUL bytes in place of some of them; its JSON numbers are exact.)
 */
export const EXACT_TEXT_PREFIX = "__jobhouse_text_";
const EXACT_TEXT_VALUE = new RegExp(`("${EXACT_TEXT_PREFIX}\\w*":)((?:null|[-+\\d.eE\\[\\],])+)`, "g");
const quoteNumbers = (_: string, key: string, value: string) => key + value.replace(/-?\d[\d.eE+-]*/g, '"$&"');

/**
 * How the client reads a result row (the numbers of EXACT_TEXT_PREFIX columns as text; no other
 * key can hold that quoted name unescaped) and writes an inserted one (a JsonLine as its text).
 */
const JSON_HANDLING = {
  parse: <T>(text: string): T => JSON.parse(text.includes(`"${EXACT_TEXT_PREFIX}`) ? text.replace(EXACT_TEXT_VALUE, quoteNumbers) : text),
  stringify: (value: unknown) => (value instanceof JsonLine ? value.text : JSON.stringify(value)),
};

// Errors reach our callers as exceptions; the client's own console logging would only duplicate them.
const QUIET = { level: ClickHouseLogLevel.OFF };

const UNKNOWN_TABLE = /UNKNOWN_TABLE|Unknown table expression|Table \S+ doesn't exist|Code: 60\b/;

/** Whether ClickHouse refused a statement because a table it names does not exist. */
export const isUnknownTable = (error: unknown): boolean => UNKNOWN_TABLE.test((error as Error)?.message ?? "") || (error as { code?: string })?.code === "60";

/**
 * A statement that names a table which does not exist is tried once more after 25 ms. ClickHouse
 * 18.16 has no atomic EXCHANGE: a replaced object's table is swapped in by renames in one statement
 * (object-registry.ts), and a reader that lands between them would otherwise fail; a table that is
 * really missing fails the second time too. Such a failure changed nothing, so trying again is safe.
 */
async function onceMoreIfTableMissing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isUnknownTable(error)) throw error;
    await new Promise((resolve) => setTimeout(resolve, 25));
    return run();
  }
}

const OLD_SERVER_ERROR = /^Code: (\d+), e\.displayText\(\) = DB::Exception: ([\s\S]*?)(?:, e\.what\(\) = \S+)?\s*$/;

/**
 * ClickHouse 18.16 words an error "Code: 47, e.displayText() = DB::Exception: Missing columns: …,
 * e.what() = DB::Exception", where chDB's client gives the words alone. Authors see the words on
 * every engine (the same mistake reads the same whichever engine ran it); the number stays the
 * error's `code`.
 */
async function inOneWording<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const match = error instanceof Error ? OLD_SERVER_ERROR.exec(error.message) : null;
    if (match) Object.assign(error as Error, { message: match[2]!, code: (error as { code?: unknown }).code ?? match[1] });
    throw error;
  }
}

/**
 * `create`: make the database when it is missing, as the process that owns the deployment's schema
 * does (server start, migrate; chDB's every opener). Any other process finds it or is refused: a
 * mistyped name in a worker's SERVICE_CH_URL made a database of its own, where its tasks' tables
 * then went, out of the server's sight.
 */
export async function openColumnStore(target: ColumnTarget, options: { create?: boolean } = {}): Promise<ColumnStore> {
  const client = target.engine === "chdb" ? await openChdb(target.location) : openServer(target.location);
  const store = wrap(client, target);
  if (options.create ?? true) {
    await store.command(sql`CREATE DATABASE IF NOT EXISTS ${ident(target.database)}`);
  } else if ((await store.query(sql`SELECT name FROM system.databases WHERE name = ${target.database}`)).length === 0) {
    await store.close();
    throw columnDatabaseMissing(target);
  }
  return store;
}

export const columnDatabaseMissing = (target: ColumnTarget) =>
  unavailable(
    `ClickHouse database "${target.database}" does not exist at ${redactUrl(target.location)}: \`jobhouse migrate\` or \`jobhouse server start\` creates it (is the name in SERVICE_CH_URL right?)`,
    "clickhouse_database_missing",
  );

async function openChdb(path: string): Promise<ClickHouseClient> {
  makePrivateDir(path);
  // Loaded lazily: the native engine is large and only local mode needs it.
  const { createChdbConnection } = await import("chdb/connection");
  return createClient({ connection: createChdbConnection({ path }), log: QUIET, json: JSON_HANDLING } as Parameters<typeof createClient>[0]);
}

function openServer(location: string): ClickHouseClient {
  const url = new URL(location);
  // The path names the database (CONTRACT §1); the client wants the server root.
  const username = decodeURIComponent(url.username) || "default";
  const password = decodeURIComponent(url.password);
  url.username = "";
  url.password = "";
  url.pathname = "/";
  return createClient({ url: url.toString(), username, password, request_timeout: 300_000, log: QUIET, json: JSON_HANDLING });
}

function wrap(client: ClickHouseClient, target: ColumnTarget): ColumnStore {
  let versionPromise: Promise<string> | undefined;
  let settingsPromise: Promise<ClickHouseSettings> | undefined;

  const version = () =>
    (versionPromise ??= client
      .query({ query: "SELECT version() AS v", format: "JSONEachRow" })
      .then((r) => r.json<{ v: string }>())
      .then((rows) => rows[0]?.v ?? "0"));

  /**
   * Settings every statement runs with, the same on every version: 64-bit integers quoted in JSON
   * (chDB and servers differ in their defaults, and JSON numbers would round past 2^53; readers
   * convert them by column type), NULL for a join's missing side, LowCardinality allowed where
   * it is still experimental, and UTC for a DateTime without a zone where the session can say so:
   * chDB takes the process's zone, and with TZ=Asia/Tokyo a UTC text was stored 9 hours off.
   */
  const settings = () =>
    (settingsPromise ??= version().then(
      (v): ClickHouseSettings => ({
        output_format_json_quote_64bit_integers: 1,
        // RFC 4180 quotes with " alone: 18.16 also took ' ('a,b' stored as a,b; 'ab'c refused).
        format_csv_allow_single_quotes: 0,
        join_use_nulls: 1,
        ...(featuresOf(v).lowCardinalityNeedsSetting ? { allow_experimental_low_cardinality_type: 1 } : {}),
        ...(featuresOf(v).sessionTimezone ? { session_timezone: "UTC" } : {}),
      }) as ClickHouseSettings,
    ));

  const qualified = (table: string) => `${ident(target.database).text}.${ident(table).text}`;

  /**
   * chDB takes an insert's payload inline, after the statement's text, where an empty line ends it:
   * a CSV whose quoted field holds one ("a\n\nb") was refused as unclosed. Such a payload goes
   * through a private file of its own (FROM INFILE); any other stays inline, read once in memory as
   * the client's chDB connection reads it anyway.
   */
  async function insertRawIntoChdb(table: string, payload: Readable, format: RawFormat): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of payload) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
    const body = Buffer.concat(chunks);
    if (!body.includes("\n\n")) {
      return inOneWording(async () => void (await client.insert({ table: qualified(table), values: Readable.from([body], { objectMode: false }), format, clickhouse_settings: await settings() })));
    }
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-insert-"));
    try {
      const file = join(dir, "payload");
      writeFileSync(file, body, { mode: PRIVATE_FILE_MODE });
      await inOneWording(async () => void (await client.command({ query: sql`INSERT INTO ${raw(qualified(table))} FROM INFILE ${file} FORMAT ${raw(format)}`.text, clickhouse_settings: await settings() })));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  return {
    engine: target.engine,
    database: target.database,
    async query<T>(statement: Sql): Promise<T[]> {
      return inOneWording(() =>
        onceMoreIfTableMissing(async () => {
          const result = await client.query({ query: statement.text, format: "JSONEachRow", clickhouse_settings: await settings() });
          return (await result.json()) as T[];
        }),
      );
    },
    async command(statement: Sql): Promise<void> {
      await inOneWording(() => onceMoreIfTableMissing(async () => void (await client.command({ query: statement.text, clickhouse_settings: await settings() }))));
    },
    async insertRows(table, rows) {
      if (rows.length === 0) return;
      await inOneWording(async () => void (await client.insert({ table: qualified(table), values: rows as Record<string, unknown>[], format: "JSONEachRow", clickhouse_settings: await settings() })));
    },
    async insertRaw(table, payload, format) {
      if (target.engine === "chdb" && format !== "Parquet") return insertRawIntoChdb(table, payload, format);
      await inOneWording(async () => void (await client.insert({ table: qualified(table), values: payload, format, clickhouse_settings: await settings() })));
    },
    version,
    features: async () => featuresOf(await version()),
    close: () => client.close(),
  };
}
