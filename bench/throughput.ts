// Benchmark (issue: execution engine): one job fans out N no-op tasks in local mode (SQLite, the
// in-process worker); reports tasks/s, the latency from a task becoming ready to it starting
// (p50/p99), SQL statements and transactions per task (counted at better-sqlite3's statements),
// the process's CPU per task, peak RSS, and graphile-worker draining N no-op jobs on PostgreSQL at
// the same concurrency in the same run (bench/distributed.ts's runner, one process). Run: npm run bench:throughput
// [-- --runs 3 --concurrency 4 --sizes 1000,10000 --baseline 0]

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openService } from "../src/app/context.js";
import { startEngine } from "../src/app/engine-runtime.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import SQLite from "better-sqlite3";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const CONCURRENCY = Number(args.get("--concurrency") ?? 4);
const SIZES = (args.get("--sizes") ?? "1000,10000").split(",").map(Number);

/**
 * Every statement better-sqlite3 runs in this process, and the transactions among them (each
 * begins with BEGIN): the engine's store traffic, counted where it happens.
 */
const counted = { statements: 0, transactions: 0 };
{
  const probe = new SQLite(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<"all" | "run" | "get" | "iterate", (...a: unknown[]) => unknown> & { source: string };
  for (const method of ["all", "run", "get", "iterate"] as const) {
    const original = proto[method];
    proto[method] = function (this: { source: string }, ...a: unknown[]) {
      counted.statements += 1;
      if (/^\s*begin\b/i.test(this.source)) counted.transactions += 1;
      return original.apply(this, a);
    };
  }
  probe.close();
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function runOnce(n: number, entrypoint = "bench/jobs.ts:fanOutNoop") {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-throughput-"));
  const service = await openService(loadConfig({ SERVICE_HOME: home }), { log: createLogger("error") });
  const admin = { ...service, principal: SYNTHETIC_ADMIN };
  await invoke(operationByName.get("setup")!, {}, admin);
  const engine = await startEngine(service, { concurrency: CONCURRENCY, background: false });
  const before = { ...counted };
  const cpuBefore = process.cpuUsage();
  const job = (await invoke(operationByName.get("run_job")!, { name: entrypoint, kwargs: { n } }, admin)) as { id: string };
  for (;;) {
    const row = await service.db.selectFrom("jobs").select("status").where("id", "=", BigInt(job.id)).executeTakeFirstOrThrow();
    if (row.status !== "PENDING" && row.status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 10));
  }
  // CPU of every thread of this process (the worker's, the task threads', libuv's) over the run,
  // per task: steadier than tasks/s on a box whose other load moves the wall clock.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMsPerTask = (cpu.user + cpu.system) / 1000 / n;
  // The bench's own polling (one statement per 10 ms) is included: a few hundred over a run.
  const statementsPerTask = (counted.statements - before.statements) / n;
  const transactionsPerTask = (counted.transactions - before.transactions) / n;
  const tasks = await service.db
    .selectFrom("tasks")
    .select(["ready_at", "started_at", "completed_at", "status"])
    .where("job_id", "=", BigInt(job.id))
    .where("kind", "=", "task")
    .execute();
  await engine.stop();
  await service.close();
  if (tasks.some((t) => t.status !== "COMPLETED")) throw new Error("some tasks did not complete");
  const firstReady = Math.min(...tasks.map((t) => Number(t.ready_at)));
  const lastDone = Math.max(...tasks.map((t) => Number(t.completed_at)));
  const latency = tasks.map((t) => Number(t.started_at) - Number(t.ready_at)).sort((a, b) => a - b);
  return {
    tasksPerSecond: n / (Math.max(1, lastDone - firstReady) / 1000),
    p50: percentile(latency, 50),
    p99: percentile(latency, 99),
    statementsPerTask,
    transactionsPerTask,
    cpuMsPerTask,
  };
}

for (const n of SIZES) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const result = await runOnce(n);
    runs.push(result);
    console.log(
      `N=${n} run ${i + 1}: ${result.tasksPerSecond.toFixed(0)} tasks/s, ready→start p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
        `${result.statementsPerTask.toFixed(2)} statements and ${result.transactionsPerTask.toFixed(2)} transactions per task, ` +
        `CPU ${result.cpuMsPerTask.toFixed(2)} ms per task`,
    );
  }
  console.log(
    JSON.stringify({
      n,
      concurrency: CONCURRENCY,
      runs: RUNS,
      tasks_per_second_median: Math.round(median(runs.map((r) => r.tasksPerSecond))),
      ready_to_start_p50_ms_median: median(runs.map((r) => r.p50)),
      ready_to_start_p99_ms_median: median(runs.map((r) => r.p99)),
      statements_per_task_median: +median(runs.map((r) => r.statementsPerTask)).toFixed(2),
      transactions_per_task_median: +median(runs.map((r) => r.transactionsPerTask)).toFixed(2),
      cpu_ms_per_task_median: +median(runs.map((r) => r.cpuMsPerTask)).toFixed(3),
    }),
  );
}

// The baseline in the same run: graphile-worker on PostgreSQL, one runner process at the same
// concurrency draining N no-op jobs (bench/distributed.ts measures it the same way as ever).
const BASELINE = Number(args.get("--baseline") ?? SIZES[SIZES.length - 1]);
if (BASELINE > 0) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(import.meta.dirname, "..", "bin", "run-ts.mjs"), join(import.meta.dirname, "distributed.ts"), "--only", "graphile", "--workers", "1", "--runs", String(RUNS), "--n", String(BASELINE), "--chain", "0"],
    { maxBuffer: 1 << 24 },
  );
  for (const line of stdout.split("\n").filter((l) => / graphile: /.test(l))) console.log(`baseline ${line.trim()}`);
}
// Dispatch latency: in a chain, each task becomes ready when its predecessor completes and waits
// behind nothing else, so ready→start is the engine's own scheduling delay.
const CHAIN = Number(args.get("--chain") ?? 300);
const chains = [];
for (let i = 0; i < RUNS; i++) {
  const result = await runOnce(CHAIN, "bench/jobs.ts:chainNoop");
  chains.push(result);
  console.log(`chain of ${CHAIN} run ${i + 1}: ${result.tasksPerSecond.toFixed(0)} tasks/s, ready→start p50 ${result.p50} ms, p99 ${result.p99} ms`);
}
console.log(
  JSON.stringify({
    chain: CHAIN,
    ready_to_start_p50_ms_median: median(chains.map((r) => r.p50)),
    ready_to_start_p99_ms_median: median(chains.map((r) => r.p99)),
  }),
);
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
