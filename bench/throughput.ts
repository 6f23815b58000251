// Benchmark (issue: execution engine): one job fans out N no-op tasks in local mode (SQLite, the
// in-process worker); reports tasks/s, the latency from a task becoming ready to it starting
// (p50/p99), and peak RSS. Run: npm run bench:throughput [-- --runs 3 --concurrency 4]

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openService } from "../src/app/context.js";
import { startEngine } from "../src/app/engine-runtime.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const CONCURRENCY = Number(args.get("--concurrency") ?? 4);
const SIZES = (args.get("--sizes") ?? "1000,10000").split(",").map(Number);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function runOnce(n: number, entrypoint = "bench/jobs.ts:fanOutNoop") {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-throughput-"));
  const service = await openService(loadConfig({ SERVICE_HOME: home }), { log: createLogger("error") });
  const admin = { ...service, principal: SYNTHETIC_ADMIN };
  await invoke(operationByName.get("setup")!, {}, admin);
  const engine = await startEngine(service, { concurrency: CONCURRENCY, background: false });
  const job = (await invoke(operationByName.get("run_job")!, { name: entrypoint, kwargs: { n } }, admin)) as { id: string };
  for (;;) {
    const row = await service.db.selectFrom("jobs").select("status").where("id", "=", BigInt(job.id)).executeTakeFirstOrThrow();
    if (row.status !== "PENDING" && row.status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 10));
  }
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
  };
}

for (const n of SIZES) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const result = await runOnce(n);
    runs.push(result);
    console.log(`N=${n} run ${i + 1}: ${result.tasksPerSecond.toFixed(0)} tasks/s, ready→start p50 ${result.p50} ms, p99 ${result.p99} ms`);
  }
  console.log(
    JSON.stringify({
      n,
      concurrency: CONCURRENCY,
      runs: RUNS,
      tasks_per_second_median: Math.round(median(runs.map((r) => r.tasksPerSecond))),
      ready_to_start_p50_ms_median: median(runs.map((r) => r.p50)),
      ready_to_start_p99_ms_median: median(runs.map((r) => r.p99)),
    }),
  );
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
