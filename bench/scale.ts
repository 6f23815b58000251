// Benchmark (issue 12 item 3): a store of 1,000,000 jobs and one job of 100,000 tasks, built once
// with bulk SQL, then the reads a user and the web app make timed through invoke (list pages with
// and without filters, a deep cursor, job detail a page of tasks at a time, stats, the scheduler),
// the query plans of each read printed, and retention deleting the big job while a claim loop runs
// beside it (the longest claim is what "without blocking claims" means).
// Run: npm run bench:scale [-- --backend local|postgres --jobs 1000000 --tasks 100000 --reps 50]

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { openService } from "../src/app/context.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger, silentLogger } from "../src/core/log.js";
import { applyRetention, fireDueSchedules } from "../src/engine/background.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { ResultCache } from "../src/operations/result-cache.js";
import { claimReadyTasks } from "../src/store/claims.js";
import { isPostgres } from "../src/store/db.js";
import { recountJobs } from "../src/store/job-counts.js";
import { insertWorker } from "../src/store/workers.js";
import { freshStores } from "./distributed-stores.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const BACKEND = args.get("--backend") ?? "local";
const JOBS = Number(args.get("--jobs") ?? 1_000_000);
const TASKS = Number(args.get("--tasks") ?? 100_000);
const REPS = Number(args.get("--reps") ?? 50);

const stores = BACKEND === "postgres" ? await freshStores("scale") : null;
const env: Record<string, string> = stores?.env ?? { SERVICE_HOME: mkdtempSync(join(tmpdir(), "jobhouse-scale-")) };
const service = await openService(loadConfig(env), { log: createLogger("error") });
// Every read computed: the result cache must not be what meets the target.
const context = { ...service, results: new ResultCache(0), principal: SYNTHETIC_ADMIN };
const call = (name: string, input: Record<string, unknown>) => invoke(operationByName.get(name)!, input, context);
await call("setup", {});
const { db } = service;
const onPostgres = isPostgres(db);
const now = Date.now();
const DAY = 86_400_000;

console.log(`backend ${BACKEND}: building ${JOBS.toLocaleString()} jobs and a job of ${TASKS.toLocaleString()} tasks…`);
let started = performance.now();
// Ids below any snowflake the service makes; 20 names, statuses mostly terminal, spread over 60 days.
// PostgreSQL would type a bare parameter beside an integer column as integer.
const big = (n: number | bigint) => sql`CAST(${n} AS BIGINT)`;
const series = (n: number) => (onPostgres ? sql.raw(`generate_series(1, ${n}) AS s(i)`) : sql.raw(`(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s) AS s`));
// The job counts' triggers (store/job-counts.ts) are off during the bulk load, and the counts rebuilt
// after it: on PostgreSQL each changed row updates its transaction's counter row, and a million in
// one transaction would walk an ever longer chain of that row's versions.
if (onPostgres) await sql`ALTER TABLE jobs DISABLE TRIGGER USER`.execute(db);
await sql`
  INSERT INTO jobs (id, name, status, run_type, preservation_mode, registered_name, entrypoint, kwargs, error, result_ref, created_at, started_at, completed_at, priority)
  SELECT i, 'job_' || (i % 20), CASE WHEN i % 100 = 0 THEN 'FAILED' WHEN i % 1000 = 1 THEN 'PENDING' ELSE 'COMPLETED' END, 'MANUAL', 'NONE', NULL,
    'bench/jobs.ts:noop', '{}', NULL, NULL, ${big(now - 60 * DAY)} + i * ${big(Math.floor((60 * DAY) / JOBS))}, NULL, NULL, 0
  FROM ${series(JOBS)}`.execute(db);
const bigJob = BigInt(JOBS + 1);
await sql`INSERT INTO jobs (id, name, status, run_type, preservation_mode, entrypoint, kwargs, created_at, started_at, priority)
  VALUES (${big(bigJob)}, 'wide', 'RUNNING', 'MANUAL', 'NONE', 'bench/jobs.ts:noop', '{}', ${big(now)}, ${big(now)}, 0)`.execute(db);
const firstTask = BigInt(JOBS + 10);
await sql`
  INSERT INTO tasks (id, job_id, name, kind, entrypoint, status, attempt, max_attempts, kwargs, backoff_ms, pending_deps, created_at, ready_at, started_at, completed_at, priority)
  SELECT ${big(firstTask)} + i, ${big(bigJob)}, 'child', 'task', 'bench/jobs.ts:noop',
    CASE WHEN i % 2 = 0 THEN 'COMPLETED' ELSE 'PENDING' END, 1, 1, '{}', 1000, 0, ${big(now)}, ${big(now - 10 * DAY)} + i,
    CASE WHEN i % 2 = 0 THEN ${big(now - 10 * DAY)} + i + 3 ELSE NULL END, CASE WHEN i % 2 = 0 THEN ${big(now - 10 * DAY)} + i + 5 ELSE NULL END, 0
  FROM ${series(TASKS)}`.execute(db);
// Other jobs have tasks too (two each for the newest 100,000), so plans choose as in a real store.
await sql`
  INSERT INTO tasks (id, job_id, name, kind, entrypoint, status, attempt, max_attempts, kwargs, backoff_ms, pending_deps, created_at, ready_at, started_at, completed_at, priority)
  SELECT ${big(firstTask)} + ${big(TASKS)} + i, ${big(JOBS)} - (i / 2), 'small', 'task', 'bench/jobs.ts:noop', 'COMPLETED', 1, 1, '{}', 1000, 0, ${big(now)}, ${big(now)}, ${big(now)}, ${big(now + 3)}, 0
  FROM ${series(Math.min(200_000, JOBS * 2))}`.execute(db);
if (onPostgres) await sql`ALTER TABLE jobs ENABLE TRIGGER USER`.execute(db);
await recountJobs(db);
// As autovacuum leaves a table after a bulk insert: statistics and the visibility map (which
// PostgreSQL's index-only counts need) up to date.
await sql.raw(onPostgres ? "VACUUM ANALYZE" : "ANALYZE").execute(db);
console.log(`built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

// The scheduler's registrations: 100 schedules, one due now.
for (let i = 0; i < 100; i++) await call("register_job", { entrypoint: "bench/jobs.ts:fanOutNoop", name: `sched_${i}`, defaults: { n: 1 }, schedule: "0 3 * * *", max_active_runs: 2, overlap: "skip" });
await db.updateTable("registered_jobs").set({ next_run_at: now - 1000 }).where("name", "=", "sched_0").execute();

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;
const rows: string[] = [];
async function time(label: string, run: () => Promise<unknown>, reps = REPS) {
  await run();
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await run();
    samples.push(performance.now() - t);
  }
  const line = `| ${label} | ${percentile(samples, 50).toFixed(1)} | ${percentile(samples, 99).toFixed(1)} |`;
  rows.push(line);
  console.log(line);
}

const page = (await call("list_jobs", { limit: 50 })) as { next_cursor: string };
let deep = page.next_cursor;
for (let i = 0; i < 200; i++) deep = ((await call("list_jobs", { limit: 50, cursor: deep })) as { next_cursor: string }).next_cursor;
const detail = (await call("get_job", { ref: String(bigJob) })) as { tasks_next_cursor: string };

console.log("| read | p50 ms | p99 ms |\n| --- | --- | --- |");
await time("list_jobs limit 50", () => call("list_jobs", { limit: 50 }));
await time("list_jobs status FAILED", () => call("list_jobs", { limit: 50, status: "FAILED" }));
await time("list_jobs name job_7", () => call("list_jobs", { limit: 50, name: "job_7" }));
await time("list_jobs since 1 day ago", () => call("list_jobs", { limit: 50, since: new Date(now - DAY).toISOString() }));
await time("list_jobs page 200 (cursor)", () => call("list_jobs", { limit: 50, cursor: deep }));
await time("get_job (first 1,000 tasks of 100,000)", () => call("get_job", { ref: String(bigJob) }));
await time("get_job (second page)", () => call("get_job", { ref: String(bigJob), tasks_cursor: detail.tasks_next_cursor }));
await time("get_job of a small job", () => call("get_job", { ref: String(Math.floor(JOBS / 2)) }));
await time("job_stats (100,000 tasks)", () => call("job_stats", { ref: String(bigJob) }));
await time("list_workers", () => call("list_workers", { limit: 50 }));
await time("list_registered_jobs", () => call("list_registered_jobs", { limit: 50 }));
const deps = { db, ids: service.ids, clock: service.clock, config: service.config, log: silentLogger, jobs: service.jobs, changes: service.changes };
await time("scheduler pass (100 registrations)", () => fireDueSchedules(deps));

// The plans of the statements behind these reads.
const explain = async (label: string, query: string) => {
  const plan = onPostgres ? await sql.raw(`EXPLAIN ${query}`).execute(db) : await sql.raw(`EXPLAIN QUERY PLAN ${query}`).execute(db);
  const text = (plan.rows as Record<string, unknown>[]).map((r) => String(r["QUERY PLAN"] ?? r.detail)).join("\n    ");
  console.log(`${label}:\n    ${text}`);
};
await explain("list page", `SELECT id, name, status FROM jobs ORDER BY id DESC LIMIT 51`);
await explain("list by status", `SELECT id FROM jobs WHERE status = 'FAILED' ORDER BY id DESC LIMIT 51`);
await explain("list by name", `SELECT id FROM jobs WHERE name = 'job_7' ORDER BY id DESC LIMIT 51`);
await explain("count by status", `SELECT count(*) FROM jobs WHERE status = 'FAILED'`);
await explain("task page", `SELECT * FROM tasks WHERE job_id = ${bigJob} ORDER BY id LIMIT 1001`);
await explain("task totals", `SELECT status, count(*), sum(coalesce(completed_at, 0) - started_at) FROM tasks WHERE job_id = ${bigJob} GROUP BY status`);
await explain("overlap count", `SELECT count(*) FROM jobs WHERE registered_name = 'sched_0' AND status IN ('PENDING', 'RUNNING')`);
await explain("expired jobs", `SELECT id FROM jobs WHERE status IN ('COMPLETED','FAILED','CANCELLED') AND completed_at < ${now} ORDER BY completed_at LIMIT 100`);

// Retention of the 100,000-task job while claims run: the longest claim while it deletes.
await db.updateTable("jobs").set({ status: "COMPLETED", completed_at: now - 400 * DAY }).where("id", "=", bigJob).execute();
const workerId = service.ids.next();
await insertWorker(db, { id: workerId, hostname: "bench", pid: process.pid, concurrency: 4, maxTasks: null, nowMs: now });
let claiming = true;
const claims: number[] = [];
const claimLoop = (async () => {
  while (claiming) {
    const t = performance.now();
    await claimReadyTasks(db, { workerId, limit: 4, nowMs: Date.now(), logDir: "/tmp/jobhouse-scale-logs" });
    claims.push(performance.now() - t);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
})();
await new Promise((resolve) => setTimeout(resolve, 1_000));
const before = [...claims];
claims.length = 0;
started = performance.now();
const retention = await applyRetention({ ...deps, config: { ...service.config, jobTtlDays: 365 } });
const retentionMs = performance.now() - started;
claiming = false;
await claimLoop;
const claimFigures = (list: number[]) => `${list.length} claims, p50 ${percentile(list, 50).toFixed(1)} ms, p99 ${percentile(list, 99).toFixed(1)} ms, longest ${Math.max(...list).toFixed(1)} ms`;
const retentionLine = `retention: ${retention} job(s), ${TASKS.toLocaleString()} tasks, in ${(retentionMs / 1000).toFixed(1)} s; claims in the second before: ${claimFigures(before)}; during: ${claimFigures(claims)}`;
console.log(retentionLine);

await service.close();
await stores?.drop();
