// The backends every shared suite runs on: SQLite + chDB (local) and PostgreSQL + ClickHouse server
// (distributed), each test with a fresh SQLite file / PostgreSQL schema / ClickHouse database.

import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe } from "vitest";

export interface Backend {
  name: "local" | "distributed";
  /** Environment for loadConfig: a fresh place to keep everything. */
  freshEnv(): Promise<Record<string, string>>;
  /** Drops what freshEnv made (the PostgreSQL schema, the ClickHouse database, the home folder). */
  dispose(env: Record<string, string>): Promise<void>;
}

import { CH_URL, PG_URL } from "./services.js";

export { CH_URL, PG_URL };

/** The PostgreSQL schema a distributed backend's SQL URL puts first on its search_path. */
export const pgSchemaOf = (sqlUrl: string): string => new URL(sqlUrl).searchParams.get("options")!.replace("-c search_path=", "");

let counter = 0;
// Random as well as counted: each test file evaluates this module anew (its counter restarts), and a
// suite now drops what it made, so two files must never pick the same name.
const unique = () => `jh_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}_${counter++}`;

/** chDB allows one data directory per process: every test of this process shares it, each with its own database. */
const processRoot = mkdtempSync(join(tmpdir(), "jobhouse-test-"));
const chdbDir = join(processRoot, "chdb");

const local: Backend = {
  name: "local",
  async freshEnv() {
    const home = join(processRoot, unique());
    mkdirSync(home, { recursive: true });
    return {
      SERVICE_HOME: home,
      SERVICE_SQL_URL: `sqlite:${join(home, "local.db")}`,
      SERVICE_CH_URL: `chdb:${chdbDir}?database=${unique()}`,
    };
  },
  // chDB's database is dropped through the harness's own session (one per process) before it closes.
  async dispose(env) {
    rmSync(env.SERVICE_HOME!, { recursive: true, force: true });
  },
};

const distributed: Backend = {
  name: "distributed",
  async freshEnv() {
    const schema = unique();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
    } finally {
      await client.end();
    }
    const home = join(processRoot, schema);
    mkdirSync(home, { recursive: true });
    const sqlUrl = new URL(PG_URL);
    sqlUrl.searchParams.set("options", `-c search_path=${schema}`);
    return {
      SERVICE_HOME: home,
      SERVICE_SQL_URL: sqlUrl.toString(),
      SERVICE_CH_URL: `${CH_URL.replace(/\/$/, "")}/${unique()}`,
      SERVICE_AUTH: "token",
    };
  },
  async dispose(env) {
    // Schemas are dropped once every test file has ended (global-teardown.ts): a DROP SCHEMA while
    // another process's migrator scans the catalog makes that scan fail ("schema … does not exist").
    const schema = pgSchemaOf(env.SERVICE_SQL_URL!);
    if (process.env.JOBHOUSE_TEST_SCHEMA_LIST) appendFileSync(process.env.JOBHOUSE_TEST_SCHEMA_LIST, schema + "\n");
    const database = new URL(env.SERVICE_CH_URL!).pathname.slice(1);
    await postToClickHouse(`DROP DATABASE IF EXISTS ${database}`);
    rmSync(env.SERVICE_HOME!, { recursive: true, force: true });
  },
};

/**
 * A statement to the ClickHouse server, tried once more on a socket the server had closed: fetch
 * reuses a pooled connection, which 18.16 closes after 3 s idle ("other side closed").
 */
async function postToClickHouse(statement: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(CH_URL, { method: "POST", body: statement });
      if (!response.ok) throw new Error(`ClickHouse answered ${response.status}: ${await response.text()}`);
      return;
    } catch (error) {
      if (attempt >= 3 || (error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
    }
  }
}

/** Whether the distributed services answer; CI requires them (JOBHOUSE_TEST_REQUIRE_ALL=1). */
async function distributedAvailable(): Promise<boolean> {
  try {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    await client.connect();
    await client.end();
    const ping = await fetch(`${CH_URL}/ping`, { signal: AbortSignal.timeout(2000) });
    return ping.ok;
  } catch {
    return false;
  }
}

const distributedUp = await distributedAvailable();
if (!distributedUp && process.env.JOBHOUSE_TEST_REQUIRE_ALL === "1") {
  throw new Error(`PostgreSQL (${PG_URL}) or ClickHouse (${CH_URL}) is not reachable, and JOBHOUSE_TEST_REQUIRE_ALL=1`);
}

export const BACKENDS: Backend[] = distributedUp ? [local, distributed] : [local];

/** Runs the same suite against every backend. */
export function forEachBackend(title: string, suite: (backend: Backend) => void): void {
  for (const backend of BACKENDS) describe(`${title} [${backend.name}]`, () => suite(backend));
}
