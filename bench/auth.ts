// Benchmark (issue: users and roles): what Scheme B costs. On PostgreSQL + ClickHouse (Scheme B is
// distributed mode's), alternated in the same run:
// - GET /api/v0/jobs?limit=50 with a Scheme A bearer (the static token) and with a Scheme B access
//   token (an HS256 JWT checked per request): the JWT check must cost under 10% of the throughput;
// - logins per second (bcrypt cost 12, bcrypt-bound);
// - GET /api/v0/jobs with a Scheme B token while a login flood runs beside it: bcrypt runs on
//   libuv's pool, so the flood must not starve other requests.
// Run: npm run bench:auth  [-- --runs 3 --seconds 8 --connections 10]

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { openService } from "../src/app/context.js";
import { WEB_ROOT } from "../src/app/local-start.js";
import { loadConfig } from "../src/core/config.js";
import { passwordWorkPending } from "../src/core/passwords.js";
import { createLogger } from "../src/core/log.js";
import { startRun } from "../src/engine/start-run.js";
import { SYNTHETIC_ADMIN, invoke, operationByName, operations } from "../src/operations/index.js";
import { buildHttpApp } from "../src/surfaces/rest/app.js";
import { freshStores } from "./distributed-stores.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const SECONDS = Number(args.get("--seconds") ?? 8);
const CONNECTIONS = Number(args.get("--connections") ?? 10);
const JOBS = 1_000;
const API_TOKEN = "bench-static-token-0123456789abcdef";
const JWT_SECRET = "bench-signing-secret-0123456789abcdef-0123456789";

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** autocannon in its own process: the server under test keeps this event loop. */
async function load(url: string, options: { headers?: Record<string, string>; body?: unknown; connections?: number; seconds?: number } = {}): Promise<Sample> {
  const argv = [join(import.meta.dirname, "..", "node_modules", "autocannon", "autocannon.js"), "-j", "-c", String(options.connections ?? CONNECTIONS), "-d", String(options.seconds ?? SECONDS)];
  for (const [name, value] of Object.entries(options.headers ?? {})) argv.push("-H", `${name}=${value}`);
  if (options.body !== undefined) argv.push("-m", "POST", "-H", "content-type=application/json", "-b", JSON.stringify(options.body));
  const result = await promisify(execFile)(process.execPath, [...argv, url], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(result.stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  if (report.errors > 0) throw new Error(`load run had ${report.errors} errors`);
  return { rps: report.requests.average, p50: report.latency.p50, p99: report.latency.p99, non2xx: report.non2xx };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const stores = await freshStores("auth_bench");
  process.env.SERVICE_API_TOKEN = API_TOKEN;
  const config = loadConfig({ ...stores.env, SERVICE_AUTH: "users", SERVICE_JWT_SECRET: JWT_SECRET });
  const service = await openService(config, { log: createLogger("error") });
  try {
    await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
    for (let i = 0; i < JOBS; i++) {
      await startRun(service.db, service.ids, service.clock, service.config, { name: `job_${i % 20}`, entrypoint: "bench/jobs.ts:noop", kwargs: { i }, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
    }
    await invoke(operationByName.get("create_user")!, { username: "bench", password: "bench password", role: "viewer" }, { ...service, principal: SYNTHETIC_ADMIN });

    const schemeB = await buildHttpApp(service, operations, { webRoot: WEB_ROOT });
    await schemeB.listen({ host: "127.0.0.1", port: 0 });
    const bUrl = `http://127.0.0.1:${(schemeB.server.address() as { port: number }).port}`;
    // The same service and stores answering with Scheme A.
    const schemeA = await buildHttpApp({ ...service, config: { ...config, auth: "token" } }, operations, { webRoot: WEB_ROOT });
    await schemeA.listen({ host: "127.0.0.1", port: 0 });
    const aUrl = `http://127.0.0.1:${(schemeA.server.address() as { port: number }).port}`;

    const login = await fetch(`${bUrl}/api/v0/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "bench", password: "bench password" }) });
    const { access_token } = (await login.json()) as { access_token: string };
    const jobs = "/api/v0/jobs?limit=50";

    const a: Sample[] = [];
    const b: Sample[] = [];
    const logins: Sample[] = [];
    const flooded: Sample[] = [];
    for (let run = 0; run < RUNS; run++) {
      a.push(await load(aUrl + jobs, { headers: { authorization: `Bearer ${API_TOKEN}` } }));
      b.push(await load(bUrl + jobs, { headers: { authorization: `Bearer ${access_token}` } }));
      logins.push(await load(`${bUrl}/api/v0/auth/login`, { body: { username: "bench", password: "bench password" }, connections: 8 }));
      // The flood and the reads at once: the reads' figures are what a login flood costs others.
      const [, reads] = await Promise.all([
        load(`${bUrl}/api/v0/auth/login`, { body: { username: "bench", password: "bench password" }, connections: 32 }),
        load(bUrl + jobs, { headers: { authorization: `Bearer ${access_token}` } }),
      ]);
      flooded.push(reads);
      const at = (s: Sample) => `${s.rps.toFixed(0)}/s p99 ${s.p99} ms`;
      console.log(`run ${run + 1}: GET /jobs scheme A ${at(a[run]!)} | scheme B ${at(b[run]!)} | logins ${logins[run]!.rps.toFixed(1)}/s | GET /jobs during a login flood ${at(flooded[run]!)}`);
      if (b[run]!.non2xx + a[run]!.non2xx + logins[run]!.non2xx + flooded[run]!.non2xx > 0) throw new Error("a request was refused: the figures would not be comparable");
    }
    const summary = {
      jobs_in_store: JOBS,
      runs: RUNS,
      seconds_per_run: SECONDS,
      connections: CONNECTIONS,
      scheme_a_rps_median: Math.round(median(a.map((s) => s.rps))),
      scheme_b_rps_median: Math.round(median(b.map((s) => s.rps))),
      scheme_b_over_a: +(median(b.map((s) => s.rps)) / median(a.map((s) => s.rps))).toFixed(3),
      scheme_a_p99_ms_median: median(a.map((s) => s.p99)),
      scheme_b_p99_ms_median: median(b.map((s) => s.p99)),
      logins_per_s_median: +median(logins.map((s) => s.rps)).toFixed(1),
      login_p50_ms_median: median(logins.map((s) => s.p50)),
      during_flood_rps_median: Math.round(median(flooded.map((s) => s.rps))),
      during_flood_p99_ms_median: median(flooded.map((s) => s.p99)),
    };
    console.log(JSON.stringify(summary, null, 2));
    // The flood's queued logins finish before the stores close under them.
    while (passwordWorkPending() > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    await schemeA.close();
    await schemeB.close();
  } finally {
    await service.close();
    await stores.drop();
  }
}

await main();
