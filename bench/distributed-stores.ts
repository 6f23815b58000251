// Fresh distributed stores for one benchmark run: a PostgreSQL schema, a ClickHouse database and a
// home folder of its own, and their removal. Benchmarks talk only to 127.0.0.1.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const CH_URL = process.env.BENCH_CH_URL ?? "http://127.0.0.1:8123";

export const unique = (prefix: string) => `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface FreshStores {
  /** SERVICE_HOME, SERVICE_SQL_URL (search_path = the schema) and SERVICE_CH_URL. */
  env: Record<string, string>;
  home: string;
  /**
   * Drops the schema and the database; the home (thousands of task-log folders) is removed when
   * the benchmark process exits. Removing it at once made the next measurement pay for it: on this
   * machine's ext4 (mounted with `discard`) the deletes slowed the file system calls of whatever
   * ran next, jobhouse's attempt logs and graphile-worker's runs alike (first runs of a bench
   * invocation were up to 2x the later ones).
   */
  drop(): Promise<void>;
}

const homesToRemove: string[] = [];
process.once("exit", () => {
  for (const home of homesToRemove) rmSync(home, { recursive: true, force: true });
});

export async function freshStores(prefix: string): Promise<FreshStores> {
  const schema = unique(prefix);
  const database = unique(prefix);
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const home = mkdtempSync(join(tmpdir(), `jobhouse-${prefix}-`));
  const sqlUrl = new URL(PG_URL);
  sqlUrl.searchParams.set("options", `-c search_path=${schema}`);
  return {
    env: { SERVICE_HOME: home, SERVICE_SQL_URL: sqlUrl.toString(), SERVICE_CH_URL: `${CH_URL}/${database}` },
    home,
    async drop() {
      await adminQuery(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await fetch(CH_URL, { method: "POST", body: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
      homesToRemove.push(home);
    },
  };
}
