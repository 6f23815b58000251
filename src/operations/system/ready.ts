// ready: the readiness probe (GET /ready, no authentication). /health says the process is alive;
// this says it can serve: the SQL store and the column store both answer a trivial query in time.

import { sql as kysql } from "kysely";
import { z } from "zod";
import { unavailable } from "../../core/errors.js";
import { sql } from "../../data/sql.js";
import { ReadyView } from "../../models/system.js";
import { defineOperation } from "../define.js";

/** A store slower than this is not ready (a probe must answer well within its own timeout). */
const CHECK_TIMEOUT_MS = 2_000;

async function timed(what: string, check: () => Promise<unknown>): Promise<{ ok: true; ms: number } | { ok: false; reason: string }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS))),
    ]);
    return { ok: true, ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return { ok: false, reason: `${what}: ${(error as Error)?.message ?? String(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

export const ready = defineOperation({
  name: "ready",
  summary: "Readiness probe: both stores answer",
  description: "200 when the SQL store and the column store each answer a trivial query within 2 s; otherwise a 503 Problem (code not_ready) naming the store that did not",
  mutates: false,
  access: "public",
  mcp: false,
  input: z.object({}),
  output: ReadyView,
  // chDB is one process's: with a local server running, the CLI asks the server.
  usesColumnStore: true,
  http: { method: "GET", path: "/ready", absolute: true, ignoreQuery: true, errors: [503] },
  cli: { command: "ready", examples: ["jobhouse ready"] },
  async handler(_input, { db, columns }) {
    const [sqlCheck, columnCheck] = await Promise.all([
      timed("the SQL store", () => kysql`SELECT 1`.execute(db)),
      // Its database, not just the server: a dropped database failed every data task while the
      // probe said ready (SELECT 1 names no database).
      timed("the column store", async () => {
        const store = await columns();
        const found = await store.query(sql`SELECT 1 AS ok FROM system.databases WHERE name = ${store.database}`);
        if (found.length === 0) throw new Error(`ClickHouse database "${store.database}" does not exist (run jobhouse migrate to create it)`);
      }),
    ]);
    const failed = [sqlCheck, columnCheck].flatMap((check) => (check.ok ? [] : [check.reason]));
    // The surface logs it (REST: the first of each minute at warn, with this reason).
    if (failed.length > 0) throw unavailable(`not ready: ${failed.join("; ")}`, "not_ready");
    return { status: "ready" as const, checks: { sql: sqlCheck as { ok: true; ms: number }, column_store: columnCheck as { ok: true; ms: number } } };
  },
});
