// Opens the orchestration store: Kysely over SQLite (better-sqlite3) or PostgreSQL (pg).

import { makeFilesPrivate, makePrivateDir } from "../core/private-files.js";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { CompiledQuery, type DatabaseConnection, type Driver, Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, SqliteDriver, sql } from "kysely";
import pg from "pg";
import type { SqlTarget } from "../core/config.js";
import type { Database } from "./schema.js";
import { applySettings, boundStatementTime } from "./pg-deadline.js";
import { usePreparedStatements } from "./pg-statements.js";

export type Store = Kysely<Database>;

export interface OpenStoreOptions {
  /** PostgreSQL schema to use (tests give each run its own). */
  pgSchema?: string;
  /** Pool size for PostgreSQL. */
  poolSize?: number;
  /**
   * A worker process's connections, which run only the engine's statements (claims, completions,
   * lookups by key): their plans are made once and are index scans whatever the statistics say
   * (see ENGINE_PLAN_SETTINGS).
   */
  engine?: boolean;
  /**
   * Long-running processes' connections: a statement unanswered this long closes its connection
   * (see boundStatementTime) rather than waiting on a stalled one for good.
   */
  statementDeadlineMs?: number;
}

export function openStore(target: SqlTarget, options: OpenStoreOptions = {}): Store {
  return target.dialect === "sqlite" ? openSqlite(target.location) : openPostgres(target.location, options);
}

function openSqlite(path: string): Store {
  if (path !== ":memory:") makePrivateDir(dirname(path));
  const database = new SQLite(path);
  // WAL lets CLI readers run beside the server; the busy timeout makes writers queue instead of failing.
  database.pragma("journal_mode = WAL");
  database.pragma("busy_timeout = 5000");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  if (path !== ":memory:") makeFilesPrivate(path, `${path}-wal`, `${path}-shm`);
  // Ids are 64-bit: read every integer as bigint so none loses precision.
  database.defaultSafeIntegers(true);
  return new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }) });
}

/**
 * Transactions begin IMMEDIATE: they take the write lock up front, so a transaction that reads
 * before it writes (claiming) waits for another process's writer through the busy timeout instead
 * of failing with SQLITE_BUSY when it tries to upgrade its lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(settings);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

const STATEMENT_CACHE_SIZE = 500;

/** What Kysely's SQLite driver uses of a prepared statement. */
type DriverStatement = Pick<SQLite.Statement, "reader" | "all" | "run" | "iterate">;

/**
 * Kysely prepares every statement anew; compiling SQL is a large share of a small query's cost, and
 * the same few statements run thousands of times (claims, transitions). Reuse prepared statements.
 */
function withStatementCache(database: SQLite.Database): SQLite.Database {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, DriverStatement>();
  database.prepare = ((source: string) => {
    // A schema change (a migration) can change what `SELECT *` returns: statements are prepared
    // anew after it, so every row maker matches its statement's columns.
    if (SCHEMA_CHANGE.test(source)) {
      cache.clear();
      return prepare(source);
    }
    let statement = cache.get(source);
    if (!statement) {
      statement = withRowMaker(prepare(source));
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    return statement;
  }) as unknown as typeof database.prepare;
  return database;
}

/**
 * better-sqlite3 builds each row object through V8's generic property API: about 1.6 µs for a row
 * of nine columns, more than SQLite takes to find it (a jobs page of 51 rows: 80 µs of 90). Rows
 * read as arrays and turned into objects by a function compiled for the statement's columns cost
 * half that. A later column of the same name wins, as it does in better-sqlite3's own objects.
 */
function withRowMaker(statement: SQLite.Statement): DriverStatement {
  if (!statement.reader) return statement;
  statement.raw(true);
  const compile = () => {
    const names = statement.columns().map((column) => column.name);
    return { width: names.length, make: compileRowMaker(names) };
  };
  let maker = compile();
  // Another process's migration is seen by SQLite, which prepares the statement again; a row of
  // another width means the columns changed under the maker. (A change there that keeps the width,
  // a renamed or reordered column, is not seen: our migrations only add columns, and a process
  // should be restarted after another one migrated its store. Asking for the columns on every run
  // would cost 18 µs, four times the statement.)
  const makeRow = (values: unknown[]) => {
    if (values.length !== maker.width) maker = compile();
    return maker.make(values);
  };
  return {
    reader: true,
    all: (...parameters: unknown[]) => (statement.all(...parameters) as unknown[][]).map(makeRow),
    run: (...parameters: unknown[]) => statement.run(...parameters),
    iterate: function* (...parameters: unknown[]) {
      for (const values of statement.iterate(...parameters) as IterableIterator<unknown[]>) yield makeRow(values);
    },
  } as DriverStatement;
}

/** Statements that change the schema. */
const SCHEMA_CHANGE = /^\s*(?:create|alter|drop)\b/i;

function compileRowMaker(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  // In an object literal `"__proto__": x` would set the prototype; such a column takes the slow way.
  if (names.includes("__proto__")) return (values) => Object.fromEntries(names.map((name, i) => [name, values[i]]));
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(", ");
  // The names are quoted as JSON string literals, so no column name can be read as code.
  return new Function("values", `return { ${fields} };`) as (values: unknown[]) => Record<string, unknown>;
}

let pgParsersInstalled = false;

function openPostgres(connectionString: string, options: OpenStoreOptions): Store {
  if (!pgParsersInstalled) {
    // int8 arrives as text by default; ids must stay exact, so parse to bigint.
    pg.types.setTypeParser(20, (value: string) => BigInt(value));
    pgParsersInstalled = true;
  }
  const deadlineMs = options.statementDeadlineMs;
  const settings = [
    // PostgreSQL ends what it can see itself, before the client gives up on the socket: a statement
    // still running (a lock held by a migration's DDL), rolled back rather than left running behind
    // a closed socket; a session idle inside a transaction whose client went silent, whose locks
    // would otherwise hold the retry; a backend whose client is gone (PostgreSQL 14 and later).
    ...(deadlineMs === undefined
      ? []
      : [
          `SET statement_timeout = ${deadlineMs - Math.min(STATEMENT_DEADLINE_MARGIN_MS, Math.floor(deadlineMs / 4))}`,
          `SET idle_in_transaction_session_timeout = ${deadlineMs}`,
          "SET client_connection_check_interval = 10000",
        ]),
    ...(options.engine ? ENGINE_PLAN_SETTINGS : []),
  ];
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    // Run on a new connection before the pool hands it out (a connection string's own options would
    // override startup options given here): see applySettings.
    ...(settings.length > 0 ? { onConnect: (client: pg.ClientBase) => applySettings(client, settings, deadlineMs) } : {}),
  });
  // A connection PostgreSQL ends (a restart, pg_terminate_backend, a network cut) emits 'error',
  // and an unheard 'error' ends the process. The pool drops such a connection (an idle one at
  // once, one in use when it is released) and the next statement opens a new one; a statement
  // that was running fails to its caller as any failed statement does.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  pool.on("connect", usePreparedStatements);
  if (deadlineMs !== undefined) pool.on("connect", (client) => boundStatementTime(client, deadlineMs));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** How much sooner PostgreSQL's statement_timeout ends a statement than the client's deadline (at most a quarter of it). */
const STATEMENT_DEADLINE_MARGIN_MS = 5_000;

/**
 * The engine's statements are prepared (see usePreparedStatements), and PostgreSQL's plan cache
 * otherwise decides per connection between planning each execution (0.3 ms for the claiming
 * completion, more than it takes to run) and one generic plan made with the statistics of that
 * moment: made while the tasks table was small, that plan scans it sequentially for good, however
 * large it grows. A worker's statements all find their rows by key, so its connections always
 * take the generic plan, and sequential scans only where no index serves.
 */
const ENGINE_PLAN_SETTINGS = ["SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off"];

/** The PostgreSQL schema the store's tables live in (its search_path), undefined if none. */
export async function currentPgSchema(db: Store): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/** Row locks (FOR UPDATE / FOR SHARE) exist on PostgreSQL; SQLite serializes writers instead. */
export const isPostgres = (db: { getExecutor(): { adapter: unknown } }): boolean => db.getExecutor().adapter instanceof PostgresAdapter;
