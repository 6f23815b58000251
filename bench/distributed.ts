// Benchmark (issue: distributed mode): the engine on PostgreSQL as separate `worker start`
// processes beside graphile-worker on the same PostgreSQL, same total concurrency.
//   - throughput: N no-op tasks (one fan-out) over 1, 2 and 4 worker processes at concurrency 4
//     each; graphile-worker drains N no-op jobs with as many runner processes.
//   - latency: a chain of C tasks, each ready when the one before completes (ready → start).
// Both sides are timed the same way: from the moment the work is ready (jobhouse: the children's
// ready_at; graphile: a run_at set slightly ahead) to the last completion.
// Run: npm run bench:distributed [-- --runs 3 --workers 1,2,4 --n 10000 --chain 300 --only jobhouse
// --profile /tmp/prof]; BENCH_CONCURRENCY=8 sets each worker's concurrency on both sides (default 4)

import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { type WorkerUtils, makeWorkerUtils, run, runMigrations } from "graphile-worker";
import { openService } from "../src/app/context.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { PG_URL, adminQuery, freshStores, unique } from "./distributed-stores.js";
import { childrenCpuMs, postgresCpuMs, startChild, stopChildren } from "./processes.js";

const BIN = join(import.meta.dirname, "..", "bin", "jobhouse.mjs");
const RUN_TS = join(import.meta.dirname, "..", "bin", "run-ts.mjs");
// An environment variable, not a flag: graphile-worker's runner is a child process of its own.
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);

const argv = process.argv.slice(2);
const args = new Map(argv.map((a, i, all) => [a, all[i + 1]]));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Figures {
  perSecond: number;
  /**
   * CPU per task (ms) during the throughput run, enqueueing included on both sides: PostgreSQL's
   * (every backend) and the worker processes'. Wall-clock figures swing ±30% run to run on this
   * machine; CPU per task is what a change to the engine's SQL or code moves.
   */
  pgCpuPerTask: number;
  workerCpuPerTask: number;
  chainP50?: number;
  chainP99?: number;
  /** An idle worker process: a run started elsewhere (here, the bench process) → its first task starts. */
  wakeP50?: number;
  wakeMax?: number;
}

// ---------------------------------------------------------------- graphile-worker runner (child)

if (argv[0] === "--graphile-child") {
  const schema = argv[1]!;
  const latencies: number[] = [];
  const runner = await run({
    connectionString: PG_URL,
    schema,
    concurrency: CONCURRENCY,
    noHandleSignals: true,
    logger: undefined,
    taskList: {
      noop: async () => undefined,
      chain: async (payload, helpers) => {
        const { i, n, readyAt } = payload as { i: number; n: number; readyAt: number };
        latencies.push(Date.now() - readyAt);
        if (i + 1 < n) await helpers.addJob("chain", { i: i + 1, n, readyAt: Date.now() });
        else process.stdout.write(`CHAIN ${JSON.stringify(latencies)}\n`);
      },
    },
  });
  process.stdout.write("READY\n");
  process.once("SIGTERM", () => void runner.stop().then(() => process.exit(0)));
  await runner.promise;
} else {
  await main();
}

// ---------------------------------------------------------------- jobhouse

async function jobhouseRun(workers: number, n: number, chain: number): Promise<Figures> {
  const stores = await freshStores("bench");
  const env = { ...process.env, ...stores.env, SERVICE_LOG_LEVEL: "info" };
  const service = await openService(loadConfig(env), { log: createLogger("error") });
  const admin = { ...service, principal: SYNTHETIC_ADMIN };
  const children: ChildProcess[] = [];
  try {
    await invoke(operationByName.get("setup")!, {}, admin);
    for (let i = 0; i < workers; i++) {
      // --profile DIR writes a CPU profile of each worker process (node --cpu-prof) there.
      const profile = args.get("--profile") ? ["--cpu-prof", `--cpu-prof-dir=${args.get("--profile")}`] : [];
      const { child } = await startChild([...profile, BIN, "worker", "start", "--concurrency", String(CONCURRENCY)], env, /worker \d+ started/);
      children.push(child);
    }
    const runJob = async (entrypoint: string, size: number, kind: "task" | "job" = "task") => {
      const job = (await invoke(operationByName.get("run_job")!, { name: `bench/jobs.ts:${entrypoint}`, kwargs: { n: size } }, admin)) as { id: string };
      for (;;) {
        const row = await service.db.selectFrom("jobs").select("status").where("id", "=", BigInt(job.id)).executeTakeFirstOrThrow();
        if (row.status === "COMPLETED") break;
        if (row.status !== "PENDING" && row.status !== "RUNNING") throw new Error(`${entrypoint} ended ${row.status}`);
        await sleep(10);
      }
      // The entry task (kind "job") is not part of the measured work, except for a wake-up.
      return service.db.selectFrom("tasks").select(["ready_at", "started_at", "completed_at"]).where("job_id", "=", BigInt(job.id)).where("kind", "=", kind).execute();
    };
    // Warm up first: a worker logs "started" before its task threads have booted and loaded the
    // job's module (over a second of CPU per process), and a long-running worker pays that once.
    await runJob("fanOutNoop", workers * CONCURRENCY * 2);
    const cpuBefore = { pg: postgresCpuMs(), workers: childrenCpuMs(children) };
    const tasks = await runJob("fanOutNoop", n);
    const firstReady = Math.min(...tasks.map((t) => Number(t.ready_at)));
    const lastDone = Math.max(...tasks.map((t) => Number(t.completed_at)));
    const figures: Figures = {
      perSecond: n / (Math.max(1, lastDone - firstReady) / 1000),
      pgCpuPerTask: (postgresCpuMs() - cpuBefore.pg) / n,
      workerCpuPerTask: (childrenCpuMs(children) - cpuBefore.workers) / n,
    };
    if (chain > 0) {
      const latency = (await runJob("chainNoop", chain)).map((t) => Number(t.started_at) - Number(t.ready_at)).sort((a, b) => a - b);
      figures.chainP50 = percentile(latency, 50);
      figures.chainP99 = percentile(latency, 99);
      // The worker is idle (polling every 500 ms as a fallback): a run started in this process
      // reaches it by NOTIFY. Random pauses, so no wake lines up with a poll by design.
      const wakes: number[] = [];
      for (let i = 0; i < 10; i++) {
        await sleep(300 + Math.random() * 400);
        const [entry] = await runJob("fanOutNoop", 0, "job");
        wakes.push(Number(entry!.started_at) - Number(entry!.ready_at));
      }
      wakes.sort((a, b) => a - b);
      figures.wakeP50 = percentile(wakes, 50);
      figures.wakeMax = wakes[wakes.length - 1];
    }
    return figures;
  } finally {
    await stopChildren(children);
    await service.close();
    await stores.drop();
  }
}

// ---------------------------------------------------------------- graphile-worker

/** Waits until graphile-worker's queue is empty. */
async function drained(utils: WorkerUtils, schema: string): Promise<void> {
  for (;;) {
    const { rows } = await utils.withPgClient((client) => client.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}._private_jobs`));
    if (Number(rows[0]!.n) === 0) return;
    await sleep(2);
  }
}

async function graphileRun(workers: number, n: number, chain: number): Promise<Figures> {
  const schema = unique("gw");
  await runMigrations({ connectionString: PG_URL, schema, logger: undefined });
  const utils = await makeWorkerUtils({ connectionString: PG_URL, schema });
  const children: { child: ChildProcess; output: () => string }[] = [];
  try {
    for (let i = 0; i < workers; i++) children.push(await startChild([RUN_TS, "bench/distributed.ts", "--graphile-child", schema], process.env, /READY/));
    // The same warm-up as jobhouse's: a few jobs drained before anything is measured.
    await utils.addJobs(Array.from({ length: workers * CONCURRENCY * 2 }, () => ({ identifier: "noop", payload: {} })));
    await drained(utils, schema);
    // Ready a moment from now, so the enqueueing is not part of the drain (as jobhouse's children
    // are inserted before their ready_at).
    const readyAt = Date.now() + 1500;
    const cpuBefore = { pg: postgresCpuMs(), workers: childrenCpuMs(children.map((c) => c.child)) };
    await utils.addJobs(Array.from({ length: n }, () => ({ identifier: "noop", payload: {}, runAt: new Date(readyAt) })));
    await drained(utils, schema);
    const lastDone = Date.now();
    const figures: Figures = {
      perSecond: n / (Math.max(1, lastDone - readyAt) / 1000),
      pgCpuPerTask: (postgresCpuMs() - cpuBefore.pg) / n,
      workerCpuPerTask: (childrenCpuMs(children.map((c) => c.child)) - cpuBefore.workers) / n,
    };
    if (chain > 0) {
      await utils.addJob("chain", { i: 0, n: chain, readyAt: Date.now() });
      for (;;) {
        const line = children.map((c) => /CHAIN (\[.*\])/.exec(c.output())?.[1]).find(Boolean);
        if (line) {
          const latency = (JSON.parse(line) as number[]).sort((a, b) => a - b);
          figures.chainP50 = percentile(latency, 50);
          figures.chainP99 = percentile(latency, 99);
          break;
        }
        await sleep(20);
      }
    }
    return figures;
  } finally {
    await stopChildren(children.map((c) => c.child));
    await utils.release();
    await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
  }
}

// ---------------------------------------------------------------- report

async function main(): Promise<void> {
  const runs = Number(args.get("--runs") ?? 3);
  const n = Number(args.get("--n") ?? 10_000);
  const chain = Number(args.get("--chain") ?? 300);
  const workerCounts = (args.get("--workers") ?? "1,2,4").split(",").map(Number);
  const only = args.get("--only");
  const fmt = (f: Figures) =>
    `${f.perSecond.toFixed(0)}/s (CPU/task: PostgreSQL ${f.pgCpuPerTask.toFixed(2)} ms, workers ${f.workerCpuPerTask.toFixed(2)} ms)` +
    (f.chainP50 === undefined ? "" : `, chain p50 ${f.chainP50} ms p99 ${f.chainP99} ms`) +
    (f.wakeP50 === undefined ? "" : `, idle wake-up p50 ${f.wakeP50} ms max ${f.wakeMax} ms`);
  for (const workers of workerCounts) {
    const ours: Figures[] = [];
    const theirs: Figures[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      const order = i % 2 === 0 ? ["jobhouse", "graphile"] : ["graphile", "jobhouse"];
      for (const who of order) {
        if (only && only !== who) continue;
        const withChain = workers === 1 ? chain : 0;
        const figures = who === "jobhouse" ? await jobhouseRun(workers, n, withChain) : await graphileRun(workers, n, withChain);
        (who === "jobhouse" ? ours : theirs).push(figures);
        console.log(`workers=${workers} run ${i + 1} ${who}: ${fmt(figures)}`);
      }
    }
    const summary = (all: Figures[]) =>
      all.length === 0
        ? "-"
        : `${median(all.map((f) => f.perSecond)).toFixed(0)}/s (CPU/task: PostgreSQL ${median(all.map((f) => f.pgCpuPerTask)).toFixed(2)} ms, workers ${median(all.map((f) => f.workerCpuPerTask)).toFixed(2)} ms)` +
          (all[0]!.chainP50 === undefined ? "" : `, chain p50 ${median(all.map((f) => f.chainP50!))} ms, p99 ${median(all.map((f) => f.chainP99!))} ms`) +
          (all[0]!.wakeP50 === undefined ? "" : `, idle wake-up p50 ${median(all.map((f) => f.wakeP50!))} ms`);
    const ratio = ours.length && theirs.length ? (median(ours.map((f) => f.perSecond)) / median(theirs.map((f) => f.perSecond))).toFixed(2) : "-";
    console.log(`workers=${workers} median: jobhouse ${summary(ours)} | graphile-worker ${summary(theirs)} | ratio ${ratio}x`);
  }
}
