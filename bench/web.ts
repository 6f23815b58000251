// Benchmark (issue: web app): the app's initial load (JS + CSS, gzip), render times in Chromium of a
// jobs view of 500 rows and of a job whose graph has 1,000 tasks, and the server's CPU while 10
// open tabs poll every 2 s, in local mode (SQLite + chDB, the server and its engine in this process).
// Run: npm run bench:web  [-- --runs 3 --seconds 20 --tabs 10]

import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import { startEngine } from "../src/app/engine-runtime.js";
import { openService } from "../src/app/context.js";
import { WEB_ROOT } from "../src/app/local-start.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import type { JobDetail } from "../src/models/jobs.js";
import { SYNTHETIC_ADMIN, invoke, operationByName, operations } from "../src/operations/index.js";
import { buildHttpApp } from "../src/surfaces/rest/app.js";
import { launchBrowser } from "../test/support/browser.js";
import { seedPendingJobs } from "./seed.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const SECONDS = Number(args.get("--seconds") ?? 20);
const TABS = Number(args.get("--tabs") ?? 10);
const JOBS = 600;
const TASKS = 1000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function initialLoadBytes(): { raw: number; gzip: number } {
  const assets = join(WEB_ROOT, "assets");
  let raw = 0;
  let gzip = 0;
  for (const name of readdirSync(assets).filter((n) => n.endsWith(".js") || n.endsWith(".css"))) {
    const bytes = readFileSync(join(assets, name));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

/** Milliseconds from navigation start until `ready` holds in the page. */
async function renderTime(page: Page, url: string, ready: () => boolean): Promise<number> {
  await page.goto("about:blank");
  await page.goto(url);
  await page.waitForFunction(ready, undefined, { timeout: 60_000, polling: 16 });
  return page.evaluate(() => performance.now() - performance.getEntriesByType("navigation")[0]!.startTime);
}

/** The longest gap between animation frames over `ms` (spanning at least two 2 s polls): jank, if any. */
async function longestFrameGap(page: Page, ms: number): Promise<number> {
  // A string, not a function: the TypeScript loader would wrap a function's inner names in a helper
  // the page does not have.
  return page.evaluate(`new Promise((resolve) => {
    const start = performance.now();
    let last = start;
    let longest = 0;
    requestAnimationFrame(function frame(now) {
      longest = Math.max(longest, now - last);
      last = now;
      if (now - start < ${ms}) requestAnimationFrame(frame);
      else resolve(longest);
    });
  })`);
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-bench-web-"));
  const service = await openService(loadConfig({ SERVICE_HOME: home }), { log: createLogger("error") });
  await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
  // The big job first, with the engine running; then jobs that stay PENDING once it is stopped.
  const engine = await startEngine(service, { concurrency: 4, background: false });
  const big = (await invoke(operationByName.get("run_job")!, { name: "bench/jobs.ts:fanOutNoop", kwargs: { n: TASKS - 1 } }, { ...service, principal: SYNTHETIC_ADMIN })) as { id: string };
  for (;;) {
    const job = (await invoke(operationByName.get("get_job")!, { ref: big.id }, { ...service, principal: SYNTHETIC_ADMIN })) as JobDetail;
    if (job.status !== "PENDING" && job.status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await engine.stop();
  await seedPendingJobs(service, JOBS);
  const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const browser = await launchBrowser();

  const load = initialLoadBytes();
  console.log(`initial load: ${(load.raw / 1024).toFixed(0)} KiB raw, ${(load.gzip / 1024).toFixed(1)} KiB gzip`);

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const jobsView: number[] = [];
  const graphView: number[] = [];
  const graphGap: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // The jobs view at 500 rows per page: the size is chosen in the page, as a user would.
    await page.goto(base + "/?p=jobs");
    await page.getByRole("cell").first().waitFor();
    const started = Date.now();
    await page.getByLabel("Rows per page").selectOption("500");
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 500, undefined, { polling: 16 });
    jobsView.push(Date.now() - started);
    const graph = await renderTime(page, `${base}/?p=job&id=${big.id}`, () => document.querySelectorAll(".graph-node").length > 0 && document.querySelectorAll(".timeline-row").length > 0);
    graphView.push(graph);
    graphGap.push(await longestFrameGap(page, 4_500));
    console.log(`run ${run + 1}: jobs view 500 rows ${jobsView.at(-1)} ms; job of ${TASKS} tasks ${graph.toFixed(0)} ms, then longest frame gap over two polls ${graphGap.at(-1)!.toFixed(0)} ms`);
  }
  await page.close();

  // Tabs polling: the server's CPU (this process: HTTP, store, serialization) over a window.
  const cpu: number[] = [];
  const requests: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const tabs = await Promise.all(Array.from({ length: TABS }, () => browser.newPage({ viewport: { width: 1280, height: 800 } })));
    let count = 0;
    for (const tab of tabs) tab.on("request", (r) => void (r.url().includes("/api/v0/") && count++));
    await Promise.all(tabs.map((tab) => tab.goto(base + "/?p=jobs")));
    await Promise.all(tabs.map((tab) => tab.getByRole("cell").first().waitFor()));
    count = 0;
    const before = process.cpuUsage();
    const wallStart = process.hrtime.bigint();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const used = process.cpuUsage(before);
    const wallMs = Number(process.hrtime.bigint() - wallStart) / 1e6;
    cpu.push(((used.user + used.system) / 1000 / wallMs) * 100);
    requests.push(count / (wallMs / 1000));
    console.log(`run ${run + 1}: ${TABS} tabs on the jobs view: server CPU ${cpu.at(-1)!.toFixed(1)}% of one core, ${requests.at(-1)!.toFixed(1)} API requests/s`);
    await Promise.all(tabs.map((tab) => tab.close()));
  }

  console.log("");
  console.log(`median of ${RUNS} runs:`);
  console.log(`  initial load (JS + CSS, gzip): ${(load.gzip / 1024).toFixed(1)} KiB`);
  console.log(`  jobs view, 500 rows: ${median(jobsView)} ms from choosing the page size to the rows drawn`);
  console.log(`  job view, ${TASKS} tasks: ${median(graphView).toFixed(0)} ms from navigation to graph and timeline drawn; longest frame gap while it polls ${median(graphGap).toFixed(0)} ms`);
  console.log(`  ${TABS} tabs polling the jobs view: server CPU ${median(cpu).toFixed(1)}% of one core (${median(requests).toFixed(1)} requests/s)`);
  await browser.close();
  await app.close();
  await service.close();
}

await main();
process.exit(0);
