// Benchmark (issue 13 item 3: OpenLineage out): what emitting costs a job. Local mode (SQLite, chDB,
// the in-process worker), a job of N tasks that each make an object and derive another from it,
// timed from run_job to its end with: no sink; a receiver answering 204; one answering 500; one
// that never answers. The receivers run in another process, so their work is not ours.
// Run: npm run bench:openlineage [-- --runs 5 --n 200 --concurrency 4]

import { mkdtempSync, rmSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { openService } from "../src/app/context.js";
import { startEngine } from "../src/app/engine-runtime.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { ident, sql } from "../src/data/sql.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { startChild, stopChildren } from "./processes.js";

const RUN_TS = join(import.meta.dirname, "..", "bin", "run-ts.mjs");
const argv = process.argv.slice(2);
const args = new Map(argv.map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 5);
const N = Number(args.get("--n") ?? 200);
const CONCURRENCY = Number(args.get("--concurrency") ?? 4);

type Scenario = "none" | "204" | "500" | "hang";
const SCENARIOS: Scenario[] = ["none", "204", "500", "hang"];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// ---------------------------------------------------------------- receivers (child process)

if (argv[0] === "--receivers-child") {
  const ports: Record<string, number> = {};
  for (const mode of ["204", "500", "hang"]) {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on("end", () => {
        if (mode === "hang") return;
        res.statusCode = Number(mode);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    ports[mode] = (server.address() as { port: number }).port;
  }
  process.stdout.write(`PORTS ${JSON.stringify(ports)}\n`);
  setInterval(() => undefined, 1_000);
} else {
  await main();
}

// ---------------------------------------------------------------- one run

interface RunFigures {
  jobMs: number;
  /** CPU time of this process (every thread: the worker's, the task threads', chDB's) over the job. */
  cpuMs: number;
  /** Shutdown: the emitter's bounded flush plus closing the stores. */
  closeMs: number;
  sent: number;
  dropped: number;
  failed: number;
}

async function runOnce(root: string, chdb: string, index: number, sinkUrl: string | null): Promise<RunFigures> {
  const home = join(root, `run-${index}`);
  const env: Record<string, string> = {
    SERVICE_HOME: home,
    SERVICE_SQL_URL: `sqlite:${join(home, "local.db")}`,
    // chDB allows one data directory per process: every run has its own database in the same one.
    SERVICE_CH_URL: `chdb:${chdb}?database=bench_${index}`,
  };
  if (sinkUrl) env.SERVICE_OPENLINEAGE_URL = sinkUrl;
  const service = await openService(loadConfig(env), { log: createLogger("error") });
  const admin = { ...service, principal: SYNTHETIC_ADMIN };
  await invoke(operationByName.get("setup")!, {}, admin);
  const engine = await startEngine(service, { concurrency: CONCURRENCY, background: false, warmThreads: true });
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  const job = (await invoke(operationByName.get("run_job")!, { name: "test/fixtures/openlineage-jobs.ts:manyObjects", kwargs: { n: N } }, admin)) as { id: string };
  let status: string;
  for (;;) {
    status = (await service.db.selectFrom("jobs").select("status").where("id", "=", BigInt(job.id)).executeTakeFirstOrThrow()).status;
    if (status !== "PENDING" && status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const jobMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuAtStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  if (status !== "COMPLETED") throw new Error(`job ${job.id} ${status}`);
  await engine.stop();
  // Each run's database goes with it: later runs must not find more tables than earlier ones.
  const columns = await service.columns();
  await columns.command(sql`DROP DATABASE IF EXISTS ${ident(columns.database)}`);
  const closing = performance.now();
  const emitter = service.openLineage;
  await service.close();
  const closeMs = performance.now() - closing;
  return { jobMs, cpuMs, closeMs, ...(emitter?.counts() ?? { sent: 0, dropped: 0, failed: 0 }) };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const receivers = await startChild([RUN_TS, "bench/openlineage.ts", "--receivers-child"], process.env, /PORTS .*\n/);
  const ports = JSON.parse(/PORTS (.*)\n/.exec(receivers.output())![1]!) as Record<string, number>;
  const urlOf = (s: Scenario) => (s === "none" ? null : `http://127.0.0.1:${ports[s]}/api/v1/lineage`);
  const root = mkdtempSync(join(tmpdir(), "jobhouse-openlineage-bench-"));
  const chdb = join(root, "chdb");
  const runs = new Map<Scenario, RunFigures[]>(SCENARIOS.map((s) => [s, []]));
  let index = 0;
  try {
    // One warm-up run (thread boot, chDB start, module caches), not counted.
    await runOnce(root, chdb, index++, null);
    // Rounds of every scenario, so drift over the session falls on each alike.
    for (let round = 0; round < RUNS; round++) {
      for (const scenario of SCENARIOS) {
        const figures = await runOnce(root, chdb, index++, urlOf(scenario));
        runs.get(scenario)!.push(figures);
        console.log(
          `round ${round + 1} ${scenario.padEnd(4)}: job ${figures.jobMs.toFixed(0)} ms, CPU ${figures.cpuMs.toFixed(0)} ms, close ${figures.closeMs.toFixed(0)} ms, events sent ${figures.sent}, dropped ${figures.dropped}, failed ${figures.failed}`,
        );
      }
    }
  } finally {
    await stopChildren([receivers.child]);
    rmSync(root, { recursive: true, force: true });
  }
  const base = median(runs.get("none")!.map((r) => r.jobMs));
  const baseCpu = median(runs.get("none")!.map((r) => r.cpuMs));
  const summary = SCENARIOS.map((scenario) => {
    const list = runs.get(scenario)!;
    const jobMs = median(list.map((r) => r.jobMs));
    return {
      sink: scenario,
      job_ms_runs: list.map((r) => Math.round(r.jobMs)),
      job_ms_median: Math.round(jobMs),
      ratio_to_no_sink: Number((jobMs / base).toFixed(3)),
      cpu_ms_runs: list.map((r) => Math.round(r.cpuMs)),
      cpu_ms_median: Math.round(median(list.map((r) => r.cpuMs))),
      cpu_ratio_to_no_sink: Number((median(list.map((r) => r.cpuMs)) / baseCpu).toFixed(3)),
      close_ms_median: Math.round(median(list.map((r) => r.closeMs))),
      sent_median: median(list.map((r) => r.sent)),
      dropped_median: median(list.map((r) => r.dropped)),
      failed_median: median(list.map((r) => r.failed)),
    };
  });
  console.log(JSON.stringify({ n: N, concurrency: CONCURRENCY, runs: RUNS, load_average: loadavg().map((l) => Number(l.toFixed(2))), results: summary }));
}
