// A worker's claiming completion keeps one generic plan per connection (ENGINE_PLAN_SETTINGS in
// store/db.ts). That plan is made at the statement's first use, often while the tasks table is
// small. When a fan-out then grows the table, the statistics are refreshed (store/statistics.ts),
// which replaces the plan: it must find every row by key, never scan a table or walk every PENDING
// task. Read with EXPLAIN EXECUTE on a worker's own connection, on PostgreSQL.

import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../src/engine/start-run.js";
import { claimReadyTasks, completeLeafAndClaimStatement } from "../src/store/claims.js";
import { type Store, openStore } from "../src/store/db.js";
import type { NewTaskRow } from "../src/store/schema.js";
import { completeTask } from "../src/store/transitions.js";
import { insertWorker } from "../src/store/workers.js";
import { BACKENDS } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

const distributed = BACKENDS.find((b) => b.name === "distributed");
const FAN_OUT = 5_000;

/** A PostgreSQL literal for one of the statement's parameters. */
function literal(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return `'{${value.join(",")}}'`;
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** The indexes that serve a condition on `id` alone (each with the line that names it). */
function indexesFindingById(plan: string): string[] {
  const lines = plan.split("\n");
  return lines.flatMap((line, i) => (/Index Cond: \(id = /.test(line) ? [/ on (\w+)/.exec(lines[i - 1]!.replace(/^.*(Scan using|Index Scan on)/, " on"))?.[1] ?? lines[i - 1]!] : []));
}

describe.runIf(distributed)("the plan of a worker's claiming completion (PostgreSQL)", () => {
  let h: Harness;
  let engineDb: Store;
  beforeAll(async () => {
    h = await startHarness(distributed!);
    // One connection, so PREPARE and EXPLAIN EXECUTE meet on it.
    engineDb = openStore(h.config.sql, { engine: true, poolSize: 1 });
    // The statistics of a new deployment's small tables.
    await sql`ANALYZE tasks`.execute(h.service.db);
    await sql`ANALYZE jobs`.execute(h.service.db);
  });
  afterAll(async () => {
    await engineDb?.destroy();
    await h?.close();
  });

  const statement = () =>
    completeLeafAndClaimStatement(
      { key: { taskId: 1n, workerId: 2n, attempt: 1 }, resultJson: '"done"', nowMs: 1_000 },
      { workerId: 2n, limit: 1, nowMs: 1_000, logDir: "/tmp/logs", settledCandidates: [3n] },
    ).compile(engineDb);
  const explain = async () => {
    const { rows } = await sql.raw<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE engine_claim(${statement().parameters.map(literal).join(", ")})`).execute(engineDb);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  };

  it("is one generic plan per connection, made at first use", async () => {
    const settings = await sql<{ mode: string; seqscan: string }>`SELECT current_setting('plan_cache_mode') AS mode, current_setting('enable_seqscan') AS seqscan`.execute(engineDb);
    expect(settings.rows[0]).toEqual({ mode: "force_generic_plan", seqscan: "off" });
    // Other processes (the server's reads) keep PostgreSQL's own choice.
    const plain = await sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode`.execute(h.service.db);
    expect(plain.rows[0]!.mode).toBe("auto");
    await sql.raw(`PREPARE engine_claim AS ${statement().sql}`).execute(engineDb);
    // The parameters stay parameters: planned once, without their values.
    expect(await explain()).toMatch(/\$\d/);
  });

  it("finds every row by key once a fan-out has grown the table", async () => {
    const { db, ids, clock, config } = h.service;
    const job = await startRun(db, ids, clock, config, { name: "wide", entrypoint: "test/fixtures/jobs.ts:fanOut", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
    const workerId = ids.next();
    await insertWorker(db, { id: workerId, hostname: "test", pid: 1, concurrency: 1, maxTasks: null, nowMs: clock.now() });
    const [entry] = (await claimReadyTasks(db, { workerId, limit: 1, nowMs: clock.now(), logDir: "/tmp/jobhouse-test-logs" })).tasks;
    const child = (i: number): NewTaskRow & { id: bigint } => ({
      id: ids.next(),
      job_id: job.id,
      name: "double",
      kind: "task",
      entrypoint: "test/fixtures/jobs.ts:double",
      status: "PENDING",
      attempt: 1,
      max_attempts: 1,
      kwargs: `{"x":${i}}`,
      result_ref: null,
      error: null,
      log_path: null,
      worker_id: null,
      timeout_ms: null,
      backoff_ms: 1000,
      pending_deps: 0,
      created_at: clock.now(),
      ready_at: null,
      retry_after: null,
      claimed_at: null,
      started_at: null,
      completed_at: null,
    });
    const children = Array.from({ length: FAN_OUT }, (_, i) => ({ row: child(i), dependsOn: [] as bigint[] }));
    const done = await completeTask(db, { key: { taskId: entry!.id, workerId, attempt: 1 }, resultJson: "null", children, resultReferences: [], nowMs: clock.now() });
    expect(done.completed).toBe(true);

    const plan = await explain();
    expect(plan).toMatch(/\$\d/);
    expect(plan).not.toMatch(/Seq Scan/);
    // The completed task, the released dependents, the claimed tasks and their jobs: by primary key.
    const byId = indexesFindingById(plan);
    expect(byId.length).toBeGreaterThanOrEqual(4);
    for (const index of byId) expect(index, plan).toMatch(/^(tasks|jobs|workers)_pkey$/);
    // No walk over every PENDING task (the claim's own pick reads them in claim order, LIMIT bounded).
    expect(plan, plan).not.toMatch(/Index Cond: \(status = 'PENDING'::text\)\n/);
  });
});
