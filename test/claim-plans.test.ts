// A worker's claiming completion keeps one generic plan per connection (ENGINE_PLAN_SETTINGS in
// store/db.ts). That plan is made at the statement's first use, often while the tasks table is
// small. When a fan-out then grows the table, the statistics are refreshed (store/statistics.ts),
// which replaces the plan: it must find every row by key, never scan a table or walk every PENDING
// task. Read with EXPLAIN EXECUTE on a worker's own connection, on PostgreSQL.

import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { startRun } from "../src/engine/start-run.js";
import { claimReadyTasks, claimValues, completeLeafAndClaimStatement } from "../src/store/claims.js";
import { type Store, openStore } from "../src/store/db.js";
import type { Database } from "../src/store/schema.js";
import { refreshStatisticsAfterGrowth } from "../src/store/statistics.js";
import { completeTask } from "../src/store/transitions.js";
import { insertWorker } from "../src/store/workers.js";
import { BACKENDS } from "./support/backends.js";
import { entry, waitFor, withEngine } from "./support/engine.js";
import { childTaskRow } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

const distributed = BACKENDS.find((b) => b.name === "distributed");
const FAN_OUT = 5_000;

/** A PostgreSQL literal for one of the statement's parameters. */
function literal(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return `'{${value.join(",")}}'`;
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** Each index condition of the plan with the line naming its scan. */
function indexConditions(plan: string): { scan: string; condition: string }[] {
  const lines = plan.split("\n");
  return lines.flatMap((line, i) => (/Index Cond: /.test(line) ? [{ scan: lines[i - 1]!.trim(), condition: line.trim() }] : []));
}

const tasksCounted = async (db: Store) =>
  Number((await sql<{ n: number }>`SELECT reltuples AS n FROM pg_class WHERE oid = 'tasks'::regclass`.execute(db)).rows[0]!.n);

describe.runIf(distributed)("the plan of a worker's claiming completion (PostgreSQL)", () => {
  let h: Harness;
  let engineDb: Store;
  beforeAll(async () => {
    h = await startHarness(distributed!);
    engineDb = openStore(h.config.sql, { engine: true, poolSize: 1 });
    // The statistics of a new deployment's small tables.
    await sql`ANALYZE tasks`.execute(h.service.db);
    await sql`ANALYZE jobs`.execute(h.service.db);
  });
  afterAll(async () => {
    await engineDb?.destroy();
    await h?.close();
  });

  it("is one generic plan per connection on a worker's connections, PostgreSQL's own choice elsewhere", async () => {
    const settings = await sql<{ mode: string; seqscan: string }>`SELECT current_setting('plan_cache_mode') AS mode, current_setting('enable_seqscan') AS seqscan`.execute(engineDb);
    expect(settings.rows[0]).toEqual({ mode: "force_generic_plan", seqscan: "off" });
    const plain = await sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode`.execute(h.service.db);
    expect(plain.rows[0]!.mode).toBe("auto");
  });

  it("finds every row by key once a fan-out has grown the table, though it was planned while the table was small", async () => {
    const statement = completeLeafAndClaimStatement(
      { taskId: 1n, workerId: 2n, attempt: 1, resultJson: '"done"', nowMs: 1_000 },
      claimValues({ workerId: 2n, limit: 1, nowMs: 1_000, logDir: "/tmp/logs", settledCandidates: [3n] }),
      false,
    ).compile(engineDb);
    // One connection held throughout: the prepared statement and its cached plan live on it.
    await engineDb.connection().execute(async (connection: Kysely<Database>) => {
      const explain = async () => {
        const { rows } = await sql.raw<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE engine_claim(${statement.parameters.map(literal).join(", ")})`).execute(connection);
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      };
      await sql.raw(`PREPARE engine_claim AS ${statement.sql}`).execute(connection);
      // Planned now, for a table of a few rows, without the parameters' values.
      expect(await explain()).toMatch(/\$\d/);

      const { db, ids, clock, config } = h.service;
      const job = await startRun(db, ids, clock, config, { name: "wide", entrypoint: "test/fixtures/jobs.ts:fanOut", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
      const workerId = ids.next();
      await insertWorker(db, { id: workerId, hostname: "test", pid: 1, concurrency: 1, maxTasks: null, nowMs: clock.now() });
      const [entryTask] = (await claimReadyTasks(db, { workerId, limit: 1, nowMs: clock.now(), logDir: "/tmp/jobhouse-test-logs" })).tasks;
      const children = Array.from({ length: FAN_OUT }, (_, i) => ({ row: childTaskRow(h, job.id, `{"x":${i}}`), dependsOn: [] as bigint[] }));
      const done = await completeTask(db, { key: { taskId: entryTask!.id, workerId, attempt: 1 }, resultJson: "null", children, resultReferences: [], nowMs: clock.now() });
      expect(done.completed).toBe(true);
      expect(await tasksCounted(db)).toBeLessThan(FAN_OUT);
      await refreshStatisticsAfterGrowth(db, FAN_OUT);
      expect(await tasksCounted(db)).toBeGreaterThanOrEqual(FAN_OUT);

      const plan = await explain();
      expect(plan).toMatch(/\$\d/);
      expect(plan).not.toMatch(/Seq Scan/);
      const conditions = indexConditions(plan);
      // The completed task, the released dependents, the claimed tasks and their jobs: by primary key.
      const byId = conditions.filter((c) => /^Index Cond: \(id = /.test(c.condition));
      expect(byId.length, plan).toBeGreaterThanOrEqual(4);
      for (const { scan } of byId) expect(scan, plan).toMatch(/ on (tasks|jobs|workers)_pkey\b| using (tasks|jobs|workers)_pkey\b/);
      // The PENDING tasks are read only where the claim picks (bounded by readiness, in claim
      // order, with a LIMIT) and per settled candidate job: never all of them.
      for (const { condition } of conditions.filter((c) => c.condition.includes("'PENDING'"))) {
        expect(condition, plan).toMatch(/pending_deps = 0\) AND \(ready_at [<>]=? \$\d+\)|job_id = c\.id\) AND \(status = 'PENDING'/);
      }
    });
  });

  it("is refreshed by the engine after a task's fan-out grows the table", async () => {
    const analyzed = async () =>
      (await sql<{ at: Date | null }>`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relid = 'tasks'::regclass`.execute(h.service.db)).rows[0]?.at ?? null;
    const before = await analyzed();
    let engine: EngineRuntime | undefined;
    try {
      engine = await withEngine(h);
      // 3,001 new tasks, more than half of the 5,002 the test above left: a growth that counts.
      const job = (await h.call("run_job", { name: entry("fanOut"), kwargs: { n: 3_000 } })) as { id: string };
      // The entry task's completion inserts them; the refresh follows it.
      await waitFor("an ANALYZE after the fan-out", async () => {
        const at = await analyzed();
        return at !== null && (before === null || at.getTime() > before.getTime());
      }, 60_000);
      await h.call("cancel_job", { ref: job.id });
    } finally {
      await engine?.stop();
    }
    // A bound for a slow machine: the fan-out of 3,000 took over 30 s on an overloaded one.
  }, 120_000);
});
