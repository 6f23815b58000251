// Benchmark (issue 12 item 1): every list and get computed (no result cache) beside a bare fastify
// handler returning the same body, on SQLite and on PostgreSQL, under autocannon in its own process.
// The store: 10,000 jobs, a job of 100 completed tasks, 20 workers, 20 registrations, 50 objects.
// Run: npm run bench:reads [-- --backend local|postgres --runs 3 --seconds 5 --only jobs]
// `--cpu-prof PREFIX` writes CPU profiles of the server's thread during each run (not the store's
// setup), one file per read, run and server (jobhouse's or the bare handler's), for `--cpu-prof`'s viewers.

import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Fastify from "fastify";
import { openService } from "../src/app/context.js";
import { WEB_ROOT } from "../src/app/local-start.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { startRun } from "../src/engine/start-run.js";
import { createObject } from "../src/objects/data-object.js";
import { scopePlane } from "../src/objects/scope-plane.js";
import { SYNTHETIC_ADMIN, invoke, operationByName, operations } from "../src/operations/index.js";
import { ResultCache } from "../src/operations/result-cache.js";
import { claimReadyTasks } from "../src/store/claims.js";
import { completeTask } from "../src/store/transitions.js";
import { insertWorker } from "../src/store/workers.js";
import { buildHttpApp } from "../src/surfaces/rest/app.js";
import { freshStores } from "./distributed-stores.js";
import { seedPendingJobs } from "./seed.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const BACKEND = args.get("--backend") ?? "local";
const RUNS = Number(args.get("--runs") ?? 3);
const SECONDS = Number(args.get("--seconds") ?? 5);
const ONLY = args.get("--only");
const CPU_PROFILE = args.get("--cpu-prof");
const TOKEN = "reads-bench-token-0123456789abcdef";

interface Sample {
  rps: number;
  p99: number;
}

async function load(url: string): Promise<Sample> {
  const autocannon = join(import.meta.dirname, "..", "node_modules", "autocannon", "autocannon.js");
  const { stdout } = await promisify(execFile)(process.execPath, [autocannon, "-j", "-c", "10", "-d", String(SECONDS), "-H", `authorization=Bearer ${TOKEN}`, url], { maxBuffer: 1 << 26 });
  const report = JSON.parse(stdout) as { requests: { average: number }; latency: { p99: number }; non2xx: number; errors: number };
  if (report.non2xx > 0 || report.errors > 0) throw new Error(`${url}: ${report.non2xx} non-2xx, ${report.errors} errors`);
  return { rps: report.requests.average, p99: report.latency.p99 };
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const stores = BACKEND === "postgres" ? await freshStores("reads") : null;
process.env.SERVICE_API_TOKEN = TOKEN;
const config = loadConfig({ ...(stores?.env ?? { SERVICE_HOME: mkdtempSync(join(tmpdir(), "jobhouse-reads-")) }), SERVICE_AUTH: "token" });
const service = await openService(config, { log: createLogger("error") });
const admin = { ...service, principal: SYNTHETIC_ADMIN };
await invoke(operationByName.get("setup")!, {}, admin);

// A job of 100 completed tasks for the detail and stats reads, made before the 10,000 others: the
// claim below takes the oldest ready task, and with the others first it took one of theirs, so
// (until 2026-11-24) this job had its entry task only and the detail and stats reads read one task.
const { db, ids, clock } = service;
const job = await startRun(db, ids, clock, config, { name: "hundred", entrypoint: "bench/jobs.ts:fanOutNoop", kwargs: { n: 100 }, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
const workerId = ids.next();
await insertWorker(db, { id: workerId, hostname: "bench", pid: process.pid, concurrency: 4, maxTasks: null, nowMs: clock.now() });
const [entry] = (await claimReadyTasks(db, { workerId, limit: 1, nowMs: clock.now(), logDir: join(service.config.logDir) })).tasks.filter((t) => t.job_id === job.id);
const task = (i: number) => ({ row: { id: ids.next(), job_id: job.id, name: "noop", kind: "task", entrypoint: "bench/jobs.ts:noop", status: "COMPLETED", attempt: 1, max_attempts: 1, kwargs: `{"i":${i}}`, result_ref: "null", backoff_ms: 1000, pending_deps: 0, created_at: clock.now(), ready_at: clock.now(), started_at: clock.now(), completed_at: clock.now() + 2 }, dependsOn: [] as bigint[] });
if (!entry) throw new Error("the claim did not take the hundred-task job's entry task");
await completeTask(db, { key: { taskId: entry.id, workerId, attempt: 1 }, resultJson: "100", children: Array.from({ length: 100 }, (_, i) => task(i)), resultReferences: [], nowMs: clock.now() });
await seedPendingJobs(service, 10_000);
const oneTask = (await db.selectFrom("tasks").select("id").where("job_id", "=", job.id).orderBy("id", "desc").limit(1).executeTakeFirstOrThrow()).id;
for (let i = 0; i < 19; i++) await insertWorker(db, { id: ids.next(), hostname: `host-${i}`, pid: 1000 + i, concurrency: 4, maxTasks: null, nowMs: clock.now() });
for (let i = 0; i < 20; i++) await invoke(operationByName.get("register_job")!, { entrypoint: "bench/jobs.ts:fanOutNoop", name: `registered_${i}`, schedule: "0 3 * * *", defaults: { n: 1 } }, admin);
const plane = scopePlane({ db, columns: await service.columns(), ids, clock, jobId: null, taskId: null, attempt: null });
for (let i = 0; i < 50; i++) await createObject({ region: ["north", "south"], amount: [i, i + 1] }, { name: `object_${i}`, scope: "global" }, plane);

const READS: Record<string, string> = {
  jobs: "/api/v0/jobs?limit=50",
  job: `/api/v0/jobs/${job.id}`,
  stats: `/api/v0/jobs/${job.id}/stats`,
  task: `/api/v0/tasks/${oneTask}`,
  workers: "/api/v0/workers?limit=50",
  registered: "/api/v0/registered-jobs?limit=50",
  objects: "/api/v0/objects?limit=50",
  object: "/api/v0/objects/object_7",
};

// Computed on every request: the result cache holds nothing.
const app = await buildHttpApp({ ...service, results: new ResultCache(0) }, operations, { webRoot: WEB_ROOT });
await app.listen({ host: "127.0.0.1", port: 0 });
const appBase = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
// The baseline: a bare fastify handler per path returning the same body as an object.
const bare = Fastify({ logger: false });
for (const [name, path] of Object.entries(READS)) {
  const body = JSON.parse(await (await fetch(appBase + path, { headers: { authorization: `Bearer ${TOKEN}` } })).text()) as unknown;
  bare.get(`/bare/${name}`, async () => body);
}
await bare.listen({ host: "127.0.0.1", port: 0 });
const bareBase = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

const profiler = CPU_PROFILE ? new Session() : null;
if (profiler) {
  profiler.connect();
  await profiler.post("Profiler.enable");
}
console.log(`backend ${BACKEND}, ${RUNS} runs of ${SECONDS} s, 10 connections`);
console.log("| read | bare req/s | jobhouse req/s | ratio | jobhouse p99 ms |\n| --- | --- | --- | --- | --- |");
for (const [name, path] of Object.entries(READS)) {
  if (ONLY && ONLY !== name) continue;
  const base: Sample[] = [];
  const ours: Sample[] = [];
  for (let run = 0; run < RUNS; run++) {
    if (profiler) await profiler.post("Profiler.start");
    base.push(await load(`${bareBase}/bare/${name}`));
    if (profiler) writeFileSync(`${CPU_PROFILE}.${name}.bare.${run}.cpuprofile`, JSON.stringify((await profiler.post("Profiler.stop")).profile));
    if (profiler) await profiler.post("Profiler.start");
    ours.push(await load(appBase + path));
    if (profiler) writeFileSync(`${CPU_PROFILE}.${name}.${run}.cpuprofile`, JSON.stringify((await profiler.post("Profiler.stop")).profile));
  }
  const b = median(base.map((s) => s.rps));
  const o = median(ours.map((s) => s.rps));
  console.log(`| ${name} \`${path.replace(/\d{6,}/g, "{id}")}\` | ${b.toFixed(0)} | ${o.toFixed(0)} | ${(o / b).toFixed(2)} | ${median(ours.map((s) => s.p99))} |`);
}
// Requests autocannon left in flight finish before the stores close.
await new Promise((resolve) => setTimeout(resolve, 2_000));
await app.close();
await bare.close();
await service.close();
await stores?.drop();
