// Benchmark (issue: service core): GET /api/v0/jobs?limit=50 with 10,000 jobs in the store, under
// autocannon on loopback, beside a bare fastify handler serving the same bytes, in the same run.
// Run: npm run bench:api  [-- --runs 3 --seconds 10 --connections 10]

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { openService } from "../src/app/context.js";
import { WEB_ROOT } from "../src/app/local-start.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName, operations } from "../src/operations/index.js";
import { ResultCache } from "../src/operations/result-cache.js";
import { buildHttpApp } from "../src/surfaces/rest/app.js";
import { seedPendingJobs } from "./seed.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const SECONDS = Number(args.get("--seconds") ?? 10);
const CONNECTIONS = Number(args.get("--connections") ?? 10);
const JOBS = 10_000;

interface Sample {
  rps: number;
  p99: number;
}

/** The load generator runs in its own process: the servers under test keep this event loop. */
async function load(url: string): Promise<Sample> {
  const result = await promisify(execFile)(
    process.execPath,
    [join(import.meta.dirname, "..", "node_modules", "autocannon", "autocannon.js"), "-j", "-c", String(CONNECTIONS), "-d", String(SECONDS), url],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(result.stdout) as { requests: { average: number }; latency: { p99: number }; non2xx: number; errors: number };
  if (report.non2xx > 0 || report.errors > 0) throw new Error(`load run had ${report.non2xx} non-2xx and ${report.errors} errors`);
  return { rps: report.requests.average, p99: report.latency.p99 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-bench-"));
  const service = await openService(loadConfig({ SERVICE_HOME: home }), { log: createLogger("error") });
  await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
  await seedPendingJobs(service, JOBS);
  const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const appUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v0/jobs?limit=50`;

  // The same app computing every response (no result cache): the cost of a changing store.
  const uncached = await buildHttpApp({ ...service, results: new ResultCache(0) }, operations, { webRoot: WEB_ROOT });
  await uncached.listen({ host: "127.0.0.1", port: 0 });
  const uncachedUrl = `http://127.0.0.1:${(uncached.server.address() as { port: number }).port}/api/v0/jobs?limit=50`;

  // The baseline: a bare fastify handler returning the same page as an object (serialized per
  // request like any handler's result), with no store, no validation, no authentication.
  const body = await (await fetch(appUrl)).text();
  const page = JSON.parse(body) as unknown;
  const bare = Fastify({ logger: false });
  bare.get("/api/v0/jobs", async () => page);
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/api/v0/jobs?limit=50`;

  const ours: Sample[] = [];
  const base: Sample[] = [];
  const cold: Sample[] = [];
  for (let run = 0; run < RUNS; run++) {
    base.push(await load(bareUrl));
    ours.push(await load(appUrl));
    cold.push(await load(uncachedUrl));
    console.log(
      `run ${run + 1}: bare ${base[run]!.rps.toFixed(0)} req/s p99 ${base[run]!.p99} ms | ` +
        `jobhouse ${ours[run]!.rps.toFixed(0)} req/s p99 ${ours[run]!.p99} ms | ` +
        `uncached ${cold[run]!.rps.toFixed(0)} req/s p99 ${cold[run]!.p99} ms`,
    );
  }
  const summary = {
    jobs_in_store: JOBS,
    response_bytes: body.length,
    runs: RUNS,
    seconds_per_run: SECONDS,
    connections: CONNECTIONS,
    bare_rps_median: Math.round(median(base.map((s) => s.rps))),
    jobhouse_rps_median: Math.round(median(ours.map((s) => s.rps))),
    jobhouse_p99_ms_median: median(ours.map((s) => s.p99)),
    bare_p99_ms_median: median(base.map((s) => s.p99)),
    uncached_rps_median: Math.round(median(cold.map((s) => s.rps))),
    uncached_p99_ms_median: median(cold.map((s) => s.p99)),
  };
  const ratio = (rps: number) => +(rps / summary.bare_rps_median).toFixed(3);
  console.log(JSON.stringify({ ...summary, ratio: ratio(summary.jobhouse_rps_median), uncached_ratio: ratio(summary.uncached_rps_median) }, null, 2));
  await app.close();
  await uncached.close();
  await bare.close();
  await service.close();
}

await main();
