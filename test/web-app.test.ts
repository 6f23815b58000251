// The web app in a real browser (CONTRACT §7 and §11): every view with real data made by running the
// examples, the task graph, polling, a cancel, deep links, no request off the origin, no console
// error; and under Scheme B: sign in, refresh of an expired access token, a viewer without
// controls, sign out. Screenshots of each view go to docs/screenshots/.

import { mkdirSync, rmSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { ManualClock } from "../src/core/clock.js";
import type { JobDetail } from "../src/models/jobs.js";
import { BACKENDS } from "./support/backends.js";
import { browserAvailable, launchBrowser, type PageRecord, record } from "./support/browser.js";
import { entry, runAndWait, waitFor, waitForJob, withEngine } from "./support/engine.js";
import { insertWorker } from "../src/store/workers.js";
import { addWorker } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

const SCREENSHOTS = "docs/screenshots";
const local = BACKENDS.find((b) => b.name === "local")!;
const distributed = BACKENDS.find((b) => b.name === "distributed");

async function shoot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

async function heading(page: Page): Promise<string> {
  return (await page.locator("h1").first().textContent())?.trim() ?? "";
}

(browserAvailable ? describe : describe.skip)("web app [local]", () => {
  let h: Harness;
  let engine: EngineRuntime;
  let browser: Browser;
  let base: string;
  let page: Page;
  let log: PageRecord;
  let sales: JobDetail;
  let primes: JobDetail;

  beforeAll(async () => {
    h = await startHarness(local);
    engine = await withEngine(h);
    await h.call("register_job", { entrypoint: "examples/sales.ts:salesPipeline" });
    await h.call("register_job", { entrypoint: "examples/heartbeat.ts:hostHeartbeat", schedule: "*/5 * * * *", max_active_runs: 1, overlap: "skip", on_failure: "http://127.0.0.1:9/hook" });
    sales = await runAndWait(h, "sales");
    primes = await runAndWait(h, "examples/primes.ts:countPrimes", { limit: 20_000, chunks: 4 });
    expect([sales.status, primes.status]).toEqual(["COMPLETED", "COMPLETED"]);
    base = await h.listen();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    log = record(page);
  });
  afterAll(async () => {
    await browser?.close();
    await engine?.stop();
    await h?.close();
  });

  it("lists the jobs in a table with statuses in words and task counts", async () => {
    await page.goto(base + "/?p=jobs");
    await page.getByRole("cell", { name: /^sales/ }).waitFor();
    expect(await heading(page)).toBe("Jobs");
    const salesRow = page.getByRole("row").filter({ hasText: `#${sales.id}` });
    await expect(salesRow.getByText("COMPLETED", { exact: true }).count()).resolves.toBe(1);
    await expect(salesRow.getByText(`${sales.total_tasks} / ${sales.total_tasks}`).count()).resolves.toBe(1);
    // Relative time, with the exact one in its title.
    expect(await salesRow.locator("time").first().getAttribute("title")).toContain(sales.created_at);
    await shoot(page, "jobs");
  });

  it("filters jobs by status and by name", async () => {
    await page.goto(base + "/?p=jobs");
    await page.getByLabel("Name").fill("primes");
    await page.getByRole("link", { name: "primes" }).waitFor();
    await waitFor("the sales row to go", async () => (await page.getByRole("link", { name: "sales" }).count()) === 0);
    await page.getByLabel("Status").selectOption("FAILED");
    await page.getByText("No job matches these filters").waitFor();
    // The filters are in the address (found by trying the product: a reload dropped them).
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ p: "jobs", name: "primes", status: "FAILED" });
    await page.reload();
    await page.getByText("No job matches these filters").waitFor();
    expect(await page.getByLabel("Status").inputValue()).toBe("FAILED");
    expect(await page.getByLabel("Name").inputValue()).toBe("primes");
    // Found by trying the product: a status the address holds that is none showed "Any status"
    // beside the list's refusal of it; it shows as what it is, and can be changed there.
    await page.goto(base + "/?p=jobs&status=NOPE");
    await page.getByText(/Could not load jobs/).waitFor();
    expect(await page.getByLabel("Status").inputValue()).toBe("NOPE");
    expect(await page.getByLabel("Status").locator("option:checked").textContent()).toBe("NOPE (not a status)");
    await page.getByLabel("Status").selectOption("");
    await page.getByRole("link", { name: "sales" }).first().waitFor();
  });

  it("keeps a list's page in the address: a reload shows the same page, Previous goes back", async () => {
    await page.goto(base + "/?p=jobs&limit=50");
    await page.getByRole("cell", { name: /^sales/ }).waitFor();
    // Fewer than 51 jobs here: ask for pages of one row through the API's own cursor instead.
    const first = (await h.http("GET", "/api/v0/jobs?limit=1")).body as { items: { id: string }[]; next_cursor: string };
    await page.goto(`${base}/?p=jobs&pages=${first.next_cursor}`);
    await page.getByText(/^Page 2 ·/).waitFor();
    await page.reload();
    await page.getByText(/^Page 2 ·/).waitFor();
    expect(await page.getByRole("row").filter({ hasText: `#${first.items[0]!.id}` }).count()).toBe(0);
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.getByText(/^Page 1 ·/).waitFor();
    expect(new URL(page.url()).searchParams.get("pages")).toBeNull();
  });

  it("shows a job with one graph node per task carrying its status, a timeline and the task table", async () => {
    await page.goto(`${base}/?p=job&id=${sales.id}`);
    await page.locator(".graph-node").first().waitFor();
    expect(await heading(page)).toBe(`Job sales #${sales.id}`);
    const nodes = await page.locator(".graph-node").evaluateAll((els) => els.map((el) => [el.getAttribute("data-node-id"), el.getAttribute("data-status")] as const));
    expect(new Map(nodes)).toEqual(new Map(sales.tasks.map((t) => [t.id, t.status])));
    // Edges follow depends_on: report waits for both aggregations.
    expect(await page.locator(".react-flow__edge").count()).toBe(sales.tasks.reduce((n, t) => n + t.depends_on.length, 0));
    // The timeline is a real table too: a header row, then one row per task headed by its name, with
    // its status in words beside the bar's colour.
    const timeline = page.getByRole("table", { name: "Timeline of task attempts" });
    expect(await timeline.evaluate((el) => el.tagName)).toBe("TABLE");
    expect(await timeline.getByRole("columnheader").allTextContents()).toEqual(["Task", "Status", expect.stringContaining("Attempt")]);
    expect(await timeline.getByRole("rowheader").count()).toBe(sales.tasks.length);
    expect(await timeline.getByRole("cell", { name: "COMPLETED", exact: true }).count()).toBe(sales.tasks.length);
    expect(await page.locator("table").last().locator("tbody tr").count()).toBe(sales.tasks.length);
    await shoot(page, "job");
    // A node of the graph is a link to its task that a click follows (the graph's pane must not take it).
    const report = sales.tasks.find((t) => t.name === "report")!;
    await page.getByRole("figure", { name: `Task graph of job ${sales.id}` }).getByRole("link", { name: /^report / }).click({ timeout: 5_000 });
    await page.getByRole("heading", { level: 1, name: /^Task report/ }).waitFor();
    expect(new URL(page.url()).search).toBe(`?p=task&id=${report.id}`);
  });

  // Found by trying the product: a task retried twice showed one bar, its last attempt's, at the
  // end of an axis its failed attempts and their backoff filled (CONTRACT §11: a timeline of attempts).
  it("draws every attempt of a retried task on the timeline, failed ones with their error", async () => {
    const flaky = await runAndWait(h, entry("flaky"), { failures: 2 });
    const retried = flaky.tasks.find((t) => t.attempt === 3)!;
    await page.goto(`${base}/?p=job&id=${flaky.id}`);
    const row = page.getByRole("table", { name: "Timeline of task attempts" }).getByRole("row").filter({ has: page.getByRole("rowheader", { name: retried.name }) }).last();
    await row.locator(".timeline-bar").nth(2).waitFor();
    const bars = await row.locator(".timeline-bar .visually-hidden").allTextContents();
    expect(bars).toEqual([
      expect.stringMatching(/^flaky: attempt 1, FAILED, .*: flaky failure on attempt 1$/),
      expect.stringMatching(/^flaky: attempt 2, FAILED, .*: flaky failure on attempt 2$/),
      expect.stringMatching(/^flaky: attempt 3, COMPLETED, /),
    ]);
  });

  // Found by trying the product: the chosen attempt was not in the address, so a reload or a shared
  // link showed the latest attempt's log, not the failure someone was pointing at.
  it("keeps a task's chosen attempt in the address: a reload shows that attempt's log", async () => {
    const flaky = await runAndWait(h, entry("flaky"), { failures: 1 });
    const retried = flaky.tasks.find((t) => t.attempt === 2)!;
    await page.goto(`${base}/?p=task&id=${retried.id}`);
    await expect(page.getByRole("log", { name: "Log of attempt 2" }).textContent()).resolves.toContain("attempt 2 of");
    await page.getByRole("group", { name: "Attempts" }).getByRole("button", { name: "Attempt 1" }).click();
    await expect(page.getByRole("log", { name: "Log of attempt 1" }).textContent()).resolves.toContain("flaky failure on attempt 1");
    expect(new URL(page.url()).search).toBe(`?p=task&id=${retried.id}&attempt=1`);
    await page.reload();
    await expect(page.getByRole("log", { name: "Log of attempt 1" }).textContent()).resolves.toContain("flaky failure on attempt 1");
    // The latest drops the parameter (it follows a later attempt), and one that never was is ignored.
    await page.getByRole("group", { name: "Attempts" }).getByRole("button", { name: "Attempt 2" }).click();
    await page.getByRole("log", { name: "Log of attempt 2" }).waitFor();
    expect(new URL(page.url()).search).toBe(`?p=task&id=${retried.id}`);
    await page.goto(`${base}/?p=task&id=${retried.id}&attempt=9`);
    await page.getByRole("log", { name: "Log of attempt 2" }).waitFor();
    // Said, not silent (found by a web trial).
    await page.getByText("This task has no attempt 9: showing attempt 2, its latest one.").waitFor();
  });

  // Found by trying the product: past the first 1,000 tasks of a job, no task could be reached.
  it("pages through a large job's tasks, the page in the address", async () => {
    const large = await runAndWait(h, entry("fanOut"), { n: 1000 });
    await page.goto(`${base}/?p=job&id=${large.id}`);
    const pages = page.getByRole("navigation", { name: "Pages of tasks" });
    await pages.getByText(/^1,000 of 1,002 tasks shown/).waitFor({ timeout: 30_000 });
    expect(await pages.getByRole("link", { name: "First tasks" }).count()).toBe(0);
    await pages.getByRole("link", { name: "Next tasks" }).click();
    await pages.getByText(/^2 of 1,002 tasks shown/).waitFor();
    expect(new URL(page.url()).searchParams.get("tasks_cursor")).toBeTruthy();
    await page.reload();
    await pages.getByText(/^2 of 1,002 tasks shown/).waitFor();
    expect(await page.locator("table").last().locator("tbody tr").count()).toBe(2);
    expect(await pages.getByRole("link", { name: "Next tasks" }).count()).toBe(0);
    await pages.getByRole("link", { name: "First tasks" }).click();
    await pages.getByText(/^1,000 of 1,002 tasks shown/).waitFor({ timeout: 30_000 });
    // Found by trying the product: a wide graph was fitted at 5%, a grey line naming nothing, and
    // each node and edge was a keyboard stop besides the node's link.
    await page.getByText(/^1,000 nodes are too many to read at once/).waitFor();
    const scale = await page.locator(".react-flow__viewport").evaluate((viewport) => new DOMMatrix(getComputedStyle(viewport).transform).a);
    expect(scale).toBeGreaterThanOrEqual(0.6);
    expect(await page.locator(".react-flow__node[tabindex='0'], .react-flow__edge[tabindex='0']").count()).toBe(0);
    await page.locator(".graph-node-link").first().waitFor();
    // A fan-in's dependencies fold after the first 20 (1,000 links filled the page before its log).
    const sum = await h.service.db.selectFrom("tasks").select("id").where("job_id", "=", BigInt(large.id)).where("name", "=", "sum").executeTakeFirstOrThrow();
    await page.goto(`${base}/?p=task&id=${sum.id}`);
    await page.getByText("and 980 more").waitFor();
    const visibleLinks = await page.locator(".facts dd a:visible").count();
    expect(visibleLinks).toBeLessThan(30);
    await page.getByText("and 980 more").click();
    expect(await page.locator(".facts dd a:visible").count()).toBeGreaterThanOrEqual(1000);
    // A small graph fits whole, without the line.
    await page.goto(`${base}/?p=job&id=${sales.id}`);
    await page.locator(".graph-node").first().waitFor();
    expect(await page.getByText(/too many to read at once/).count()).toBe(0);
  });

  it("shows a task with its result and its log", async () => {
    const report = sales.tasks.find((t) => t.name === "report")!;
    await page.goto(`${base}/?p=job&id=${sales.id}`);
    await page.locator("table").last().getByRole("link", { name: "report" }).click();
    await page.getByRole("heading", { level: 1, name: /^Task report/ }).waitFor();
    expect(new URL(page.url()).search).toBe(`?p=task&id=${report.id}`);
    // The log is a named log region (it follows while the task runs).
    await expect(page.getByRole("log", { name: "Log of attempt 1" }).textContent()).resolves.toContain("total revenue");
    await shoot(page, "task");
    // Found by trying the product: a finished task's log (up to 1 MiB) came again every 2 s.
    const reads: string[] = [];
    const count = (r: { url(): string }) => void (r.url().includes(`/api/v0/tasks/${report.id}/logs`) && reads.push(r.url()));
    page.on("request", count);
    await page.reload();
    await page.getByRole("log", { name: "Log of attempt 1" }).waitFor();
    await page.waitForTimeout(5_000);
    page.off("request", count);
    expect(reads).toHaveLength(1);
  });

  it("says where a task's log is when it cannot be read here (another host's, or gone)", async () => {
    const hello = await runAndWait(h, entry("hello"), {});
    const task = hello.tasks[0]!;
    const logs = (await h.call("get_task_logs", { id: task.id })) as { path: string };
    rmSync(logs.path);
    await page.goto(`${base}/?p=task&id=${task.id}`);
    await page.getByText("The log is not available here").waitFor();
    await page.getByText(logs.path, { exact: true }).waitFor();
  });

  // Found by trying the product: a skipped task's page named a log file for an attempt that never ran.
  it("shows no log for a task that never started", async () => {
    const failed = await runAndWait(h, entry("failing"), {});
    const skipped = failed.tasks.find((t) => t.status === "SKIPPED")!;
    await page.goto(`${base}/?p=task&id=${skipped.id}`);
    await page.getByText("No attempt has started").waitFor();
    expect(await page.getByText("The log is not available here").count()).toBe(0);
  });

  it("shows the objects and an object's schema, lineage graph and SQL", async () => {
    await page.goto(base + "/?p=objects");
    await page.getByRole("link", { name: "sales_by_region" }).click();
    await page.getByRole("heading", { level: 1, name: /^Object sales_by_region/ }).waitFor();
    await page.getByRole("cell", { name: "region", exact: true }).waitFor();
    // The graph walks through the dropped temps to the CSV the example loads (the REST model's graph).
    const graph = page.getByRole("figure", { name: "Lineage of sales_by_region" });
    await graph.locator(".graph-node", { hasText: "sales.csv" }).waitFor();
    expect(await graph.locator(".graph-node", { hasText: "dropped" }).count()).toBeGreaterThanOrEqual(2);
    await expect(page.getByRole("list", { name: "Sources" }).textContent()).resolves.toMatch(/^file .*examples\/data\/sales\.csv \(csv, /);
    await page.getByRole("cell", { name: "sales.csv.region" }).waitFor();
    await expect(page.locator("pre.sql").first().textContent()).resolves.toContain("GROUP BY");
    await shoot(page, "object");
    await page.goto(base + "/?p=objects");
    await page.getByRole("cell", { name: /sales_by_region/ }).waitFor();
    await shoot(page, "objects");
  });

  it("shows workers, and the registered jobs with their schedule in words", async () => {
    await page.goto(base + "/?p=workers");
    await page.getByRole("cell", { name: "ACTIVE" }).first().waitFor();
    await shoot(page, "workers");
    await page.goto(base + "/?p=registered");
    await page.getByRole("cell", { name: /every 5 minutes/ }).waitFor();
    // Its run limit and failure webhook are shown with its state.
    await page.getByText("≤ 1 at once, skips").waitFor();
    await page.getByText("notifies on failure").waitFor();
    await shoot(page, "registered");
    // Filtered by a name prefix and by state, kept in the address (the view had no filters).
    const rows = () => page.locator("tbody tr").count();
    expect(await rows()).toBeGreaterThan(1);
    await page.getByRole("searchbox", { name: "Name" }).fill("sal");
    await page.waitForURL(/[?&]name=sal(&|$)/);
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
    await page.getByRole("cell", { name: "sales", exact: true }).waitFor();
    await page.getByLabel("State").selectOption("Disabled");
    await page.getByText("No registered job matches these filters").waitFor();
    await page.reload();
    expect(await page.getByLabel("State").inputValue()).toBe("false");
    await page.getByText("No registered job matches these filters").waitFor();
  });

  it("runs a registered job now with arguments checked before they are sent", async () => {
    await page.goto(base + "/?p=registered");
    // Found by the words it shows: every control's accessible name contains its visible text.
    await page.getByRole("button", { name: "Run now: sales" }).click();
    const editor = page.getByLabel(/^Arguments \(JSON object/);
    const unnamedByTheirWords = await page
      .locator("button[aria-label]")
      .evaluateAll((buttons) => buttons.filter((b) => !b.getAttribute("aria-label")!.toLowerCase().includes((b.textContent ?? "").trim().toLowerCase())).map((b) => b.getAttribute("aria-label")));
    expect(unnamedByTheirWords).toEqual([]);
    await editor.fill("[1, 2]");
    await page.getByText("must be a JSON object").waitFor();
    await shoot(page, "registered-run-now");
    expect(await page.getByRole("button", { name: "Start run of sales" }).isDisabled()).toBe(true);
    // The job's own schema (top: an integer from 1 to 12) is checked before sending, field by field.
    await editor.fill('{"top": 99}');
    await page.getByText('"top" must be at most 12').waitFor();
    expect(await page.getByRole("button", { name: "Start run of sales" }).isDisabled()).toBe(true);
    expect(await page.getByRole("table", { name: "Arguments of the job" }).getByRole("row").count()).toBe(3);
    await editor.fill('{"top": 2}');
    await page.getByRole("button", { name: "Start run of sales" }).click();
    await page.getByRole("heading", { level: 1, name: /^Job sales #/ }).waitFor();
    const id = new URL(page.url()).searchParams.get("id")!;
    const job = await waitForJob(h, id);
    expect(job.kwargs).toMatchObject({ top: 2 });
  });

  it("cancels a running job from its view", async () => {
    const napping = (await h.call("run_job", { name: entry("nap"), kwargs: { ms: 60_000 } })) as { id: string };
    await waitFor("the nap to run", async () => ((await h.call("get_job", { ref: napping.id })) as JobDetail).status === "RUNNING");
    await page.goto(`${base}/?p=job&id=${napping.id}`);
    await page.getByRole("button", { name: "Cancel job" }).click();
    await page.getByRole("button", { name: "Yes, cancel job" }).click();
    expect((await waitForJob(h, napping.id)).status).toBe("CANCELLED");
    await page.getByText("CANCELLED", { exact: true }).first().waitFor();
    expect(await page.getByRole("button", { name: "Cancel job" }).count()).toBe(0);

    // The cancelled run can be run again from its view; the new run says what it re-runs.
    await page.getByRole("button", { name: "Re-run from failure" }).click();
    await page.waitForURL((url) => url.searchParams.get("id") !== napping.id);
    const rerunId = new URL(page.url()).searchParams.get("id")!;
    await page.getByText(`Re-run of job #${napping.id}`).waitFor();
    expect(((await h.call("get_job", { ref: rerunId })) as JobDetail).rerun_of).toBe(napping.id);
    await h.call("cancel_job", { ref: rerunId });
  });

  it("polls every 2 seconds while the tab is visible", async () => {
    await page.goto(base + "/?p=jobs");
    await page.getByRole("link", { name: "sales" }).first().waitFor();
    const before = log.requests.filter((r) => r.startsWith("GET ") && r.includes("/api/v0/jobs?")).length;
    await page.waitForTimeout(4_500);
    const after = log.requests.filter((r) => r.startsWith("GET ") && r.includes("/api/v0/jobs?")).length;
    expect(after - before).toBeGreaterThanOrEqual(2);
    expect(after - before).toBeLessThanOrEqual(3);
  });

  it("keeps one event stream for all its tabs, handed over when that tab closes, and shows a job's end", async () => {
    const context = await browser.newContext();
    try {
      const first = await context.newPage();
      const firstLog = record(first);
      await first.goto(`${base}/?p=jobs`);
      await first.getByRole("status").filter({ hasText: "Live" }).waitFor();
      const second = await context.newPage();
      const secondLog = record(second);
      const napping = (await h.call("run_job", { name: entry("nap"), kwargs: { ms: 1_500 } })) as { id: string };
      await second.goto(`${base}/?p=job&id=${napping.id}`);
      // The second tab hears the first one's stream: live, without a stream of its own.
      await second.getByRole("status").filter({ hasText: "Live" }).waitFor();
      const streams = (l: PageRecord) => l.requests.filter((r) => r.startsWith("GET ") && r.includes("/api/v0/events")).length;
      expect([streams(firstLog), streams(secondLog)]).toEqual([1, 0]);
      await first.close();
      await waitFor("the second tab to take the stream over", async () => streams(secondLog) === 1);
      await second.getByRole("status").filter({ hasText: "Live" }).waitFor();
      expect((await waitForJob(h, napping.id)).status).toBe("COMPLETED");
      await second.getByText("COMPLETED", { exact: true }).first().waitFor();
    } finally {
      await context.close();
    }
  });

  it("serves the API documents (Swagger UI, ReDoc) drawn from this origin only, without a console error", async () => {
    for (const [path, drawn] of [["/api/v0/docs", ".swagger-ui .info .title"], ["/api/v0/redoc", "h1"]] as const) {
      const docs = await browser.newPage();
      const docsLog = record(docs);
      try {
        await docs.goto(base + path);
        await docs.locator(drawn).filter({ hasText: "jobhouse" }).first().waitFor();
        // ReDoc's sidebar draws its maker's logo once the menu is up; give it the moment it takes.
        await docs.getByText("Stream job and task changes").first().waitFor({ state: "attached" });
        // ReDoc's search runs in a worker loaded from a blob: URL of this same origin.
        const offOrigin = (url: string) => !url.startsWith(base + "/") && !url.startsWith(`blob:${base}/`);
        expect(docsLog.requests.filter((r) => offOrigin(r.split(" ")[1]!)), path).toEqual([]);
        expect(docsLog.errors, path).toEqual([]);
      } finally {
        await docs.close();
      }
    }
  });

  it("opens a deep link on reload, and an unknown view says so", async () => {
    await page.goto(`${base}/?p=job&id=${primes.id}`);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: `Job primes #${primes.id}` }).waitFor();
    await page.goto(base + "/?p=nothing");
    expect(await heading(page)).toBe("No such view");
    await page.goto(`${base}/?p=job&id=999`);
    await page.getByText("No such job").waitFor();
    // A view whose resource is missing is still headed by the view's name.
    expect(await heading(page)).toBe("Job");
    await page.goto(`${base}/?p=task&id=999`);
    await page.getByText("No such task").waitFor();
    expect(await heading(page)).toBe("Task");
    await page.goto(`${base}/?p=object&name=no_such_object`);
    await page.getByText("No such object").waitFor();
    expect(await heading(page)).toBe("Object");
    // A refusal asking again will not change (422) is shown once, not polled every 2 seconds.
    const asked: string[] = [];
    const count = (r: { url(): string }) => void (r.url().includes("/api/v0/tasks/abc") && asked.push(r.url()));
    page.on("request", count);
    await page.goto(`${base}/?p=task&id=abc`);
    await page.getByText("Could not load task").waitFor();
    await page.waitForTimeout(4_500);
    page.off("request", count);
    expect(asked).toHaveLength(1);
    expect(await page.getByText("Retrying every 2 seconds.").count()).toBe(0);
  });

  // Found by trying the product: with the server gone, the page went on showing its last data as if
  // nothing were wrong.
  it("says when the server stops answering, and stops saying it when it answers again", async () => {
    await page.goto(base + "/?p=workers");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    await page.route("**/api/v0/**", (route) => route.abort("connectionrefused"));
    await page.getByText(/^The server is not answering/).waitFor({ timeout: 10_000 });
    expect(await heading(page)).toBe("Workers");
    // Found by trying the product: a few seconds later the session's own poll failed too, and the
    // whole page (notice, heading, navigation) gave way to "Could not load your session".
    await page.waitForTimeout(6_000);
    expect(await heading(page)).toBe("Workers");
    expect(await page.getByText(/^The server is not answering/).count()).toBe(1);
    expect(await page.getByText("Could not load your session").count()).toBe(0);
    await page.unroute("**/api/v0/**");
    await waitFor("the notice to go", async () => (await page.getByText(/^The server is not answering/).count()) === 0);
  });

  it("switches to the dark theme and remembers it", async () => {
    await page.goto(`${base}/?p=job&id=${sales.id}`);
    await page.getByRole("button", { name: "Dark theme" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await page.reload();
    await page.locator(".graph-node").first().waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await shoot(page, "job-dark");
    await page.getByRole("button", { name: "Light theme" }).click();
  });

  it("is readable on a narrow screen", async () => {
    const narrow = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await narrow.goto(`${base}/?p=job&id=${sales.id}`);
    await narrow.locator(".graph-node").first().waitFor();
    // Nothing but the tables' own scrolling areas may be wider than the screen.
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shoot(narrow, "job-narrow");
    await narrow.close();
  });

  // Found by trying the product: a valid name of 128 characters pushed the status and the actions
  // of every row off a 1280-pixel screen.
  it("wraps a long name in the jobs and registered lists rather than pushing the other columns off-screen", async () => {
    const name = "a".repeat(128);
    await h.call("register_job", { entrypoint: entry("hello"), name });
    await runAndWait(h, name);
    const wide = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    for (const view of [`jobs&name=${name}`, "registered"]) {
      await wide.goto(`${base}/?p=${view}`);
      await wide.getByText(name).first().waitFor();
      const wraps = await wide.evaluate(() => Array.from(document.querySelectorAll(".table-wrap")).map((wrap) => wrap.scrollWidth - wrap.clientWidth));
      expect(wraps.length, view).toBeGreaterThan(0);
      expect(wraps.filter((overflow) => overflow > 0), view).toEqual([]);
    }
    // The job's own page: its heading wraps (it made the whole page scroll sideways, at 1280 and
    // at 390 pixels), and on a phone the list's first column keeps a readable width.
    const [job] = ((await h.call("list_jobs", { name })) as { items: { id: string }[] }).items;
    const narrow = await browser.newPage({ viewport: { width: 390, height: 844 } });
    for (const screen of [wide, narrow]) {
      await screen.goto(`${base}/?p=job&id=${job!.id}`);
      await screen.getByRole("heading", { level: 1 }).filter({ hasText: name }).waitFor();
      const width = screen.viewportSize()!.width;
      expect(await screen.evaluate(() => document.documentElement.scrollWidth), `${width} px`).toBeLessThanOrEqual(width);
    }
    await narrow.goto(`${base}/?p=jobs&name=${name}`);
    await narrow.getByText(name).first().waitFor();
    expect(await narrow.evaluate(() => document.querySelector("tbody td")!.getBoundingClientRect().width)).toBeGreaterThanOrEqual(100);
    await wide.close();
    await narrow.close();
  });

  it("sent no request off its origin and logged no console error", () => {
    expect(log.requests.length).toBeGreaterThan(20);
    expect(log.requests.filter((r) => !r.split(" ")[1]!.startsWith(base + "/"))).toEqual([]);
    // The 404 (task 999), the 422 (task abc) and the refused connections asked for on purpose are
    // the only errors the console may show.
    expect(log.errors.filter((e) => !e.includes("404") && !e.includes("422") && !e.includes("ERR_CONNECTION_REFUSED"))).toEqual([]);
  });
});

const SECRET = "a-test-signing-secret-of-at-least-32-bytes!";
const ACCESS_TTL_S = 300;

(browserAvailable && distributed ? describe : describe.skip)("web app with users [distributed]", () => {
  let h: Harness;
  let engine: EngineRuntime;
  let browser: Browser;
  let base: string;
  let job: JobDetail;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    // POST /workers starts this instead of a real worker: the view's answer is what is tested.
    h = await startHarness(distributed!, { SERVICE_AUTH: "users", SERVICE_JWT_SECRET: SECRET, SERVICE_JWT_ACCESS_TTL: String(ACCESS_TTL_S), SERVICE_WORKER_COMMAND: "/bin/true" }, { clock });
    await h.call("create_user", { username: "root", password: "root password", role: "admin" });
    await h.call("create_user", { username: "alice", password: "alice password", role: "viewer" });
    engine = await withEngine(h);
    job = await runAndWait(h, entry("fanOut"), { n: 3 });
    await addWorker(h);
    base = await h.listen();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await engine?.stop();
    await h?.close();
  });

  async function signIn(page: Page, username: string, password: string) {
    await page.getByLabel("Username").fill(username);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  it("sends a caller without a session to the login view and back to the deep link after signing in", async () => {
    const page = await browser.newPage();
    const log = record(page);
    await page.goto(`${base}/?p=job&id=${job.id}`);
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    await shoot(page, "login");
    await signIn(page, "root", "wrong password");
    await page.getByRole("alert").getByText("Wrong username or password.").waitFor();
    await signIn(page, "root", "root password");
    await page.getByRole("heading", { level: 1, name: `Job ${job.name} #${job.id}` }).waitFor();
    // The access token stays in memory; only the refresh token is stored.
    const stored = await page.evaluate(() => Object.keys(localStorage));
    expect(stored).toContain("jobhouse.refresh_token");
    expect(await page.evaluate(() => Object.values(localStorage).some((v) => v.split(".").length === 3))).toBe(false);
    // Every API request carried the bearer.
    const apiRequests: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/v0/") && !r.url().includes("/auth/")) apiRequests.push(r.headers().authorization ?? "none");
    });
    await page.waitForTimeout(2_500);
    expect(apiRequests.length).toBeGreaterThan(0);
    expect(apiRequests.every((a) => a.startsWith("Bearer "))).toBe(true);
    expect(log.requests.filter((r) => !r.split(" ")[1]!.startsWith(base + "/"))).toEqual([]);
    // Found by trying the product: the sign-in view, opened while signed in, showed a bare form.
    await page.goto(`${base}/?p=login&next=${encodeURIComponent(`/?p=job&id=${job.id}`)}`);
    await page.getByRole("heading", { level: 1, name: `Job ${job.name} #${job.id}` }).waitFor();
    await page.goto(`${base}/?p=login`);
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    await page.close();
  });

  // Found by trying the product: tabs opened together (a restored session) refreshed in turn, but
  // one could read the token another had just rotated, and presenting it revoked the session.
  it("keeps every tab signed in when several open at once and each refreshes", async () => {
    for (let round = 0; round < 3; round++) {
      const context = await browser.newContext();
      const first = await context.newPage();
      await first.goto(base + "/?p=jobs");
      await signIn(first, "root", "root password");
      await first.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
      const views = ["workers", "registered", "objects"];
      const tabs = await Promise.all(views.map(() => context.newPage()));
      await Promise.all(tabs.map((tab, i) => tab.goto(`${base}/?p=${views[i]}`)));
      await Promise.all(tabs.map((tab) => tab.getByRole("heading", { level: 1 }).first().waitFor()));
      await first.waitForTimeout(2_500);
      for (const tab of [first, ...tabs]) expect(await heading(tab), `round ${round}`).not.toBe("Sign in");
      await context.close();
    }
  });

  it("refreshes an expired access token once and carries on, then reloads into the same session", async () => {
    const page = await browser.newPage();
    const log = record(page);
    await page.goto(base + "/?p=workers");
    await signIn(page, "root", "root password");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    clock.advance((ACCESS_TTL_S + 5) * 1000);
    await waitFor("a refresh", async () => log.requests.some((r) => r.startsWith("POST ") && r.endsWith("/api/v0/auth/refresh")));
    await page.waitForTimeout(2_500);
    expect(await heading(page)).toBe("Workers");
    expect(log.requests.filter((r) => r.endsWith("/api/v0/auth/refresh")).length).toBe(1);
    // A reload loses the in-memory access token: the stored refresh token restores the session.
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    expect(await page.getByRole("button", { name: "Start worker" }).count()).toBe(1);
    await page.close();
  });

  it("starts a worker from the workers view: the 202 without a body reads as started", async () => {
    const page = await browser.newPage();
    await page.goto(base + "/?p=workers");
    await signIn(page, "root", "root password");
    await page.getByRole("button", { name: "Start worker" }).click();
    await page.getByRole("status").filter({ hasText: "Starting: it appears here once it registers." }).waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    // Found by trying the product: the note stayed after the worker had registered.
    await insertWorker(h.service.db, { id: h.service.ids.next(), hostname: "started-from-the-page", pid: 4242, concurrency: 4, maxTasks: null, nowMs: Date.now() });
    await page.getByRole("cell", { name: "started-from-the-page" }).waitFor();
    await page.getByRole("status").filter({ hasText: "Starting:" }).waitFor({ state: "detached" });
    await page.close();
  });

  it("shows a viewer no control for a mutation", async () => {
    const page = await browser.newPage();
    await page.goto(base + "/?p=workers");
    await signIn(page, "alice", "alice password");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    await page.getByText("viewer", { exact: true }).waitFor();
    await page.getByRole("cell", { name: "ACTIVE" }).first().waitFor();
    for (const view of ["workers", "registered", "jobs", "objects"]) {
      await page.goto(`${base}/?p=${view}`);
      await page.locator("h1").waitFor();
      await page.waitForTimeout(300);
      expect(await page.getByRole("button", { name: /^(Start worker|Stop|Run|Enable|Disable|Cancel job)/ }).count(), view).toBe(0);
    }
    const running = (await h.call("run_job", { name: entry("nap"), kwargs: { ms: 30_000 } })) as { id: string };
    await page.goto(`${base}/?p=job&id=${running.id}`);
    await page.getByRole("heading", { level: 1, name: /^Job nap/ }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel job" }).count()).toBe(0);
    await h.call("cancel_job", { ref: running.id });
    await page.close();
  });

  it("signs out: the refresh token is revoked and forgotten, and the login view shows", async () => {
    const page = await browser.newPage();
    await page.goto(base + "/?p=jobs");
    await signIn(page, "root", "root password");
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    const token = await page.evaluate(() => localStorage.getItem("jobhouse.refresh_token"));
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem("jobhouse.refresh_token"))).toBeNull();
    expect((await h.http("POST", "/api/v0/auth/refresh", { refresh_token: token })).status).toBe(401);
    expect(await page.getByText("Your session has ended").count()).toBe(0);
    await page.close();
  });

  // Found by trying the product: a session the server ended showed the login view with no word why.
  it("says so when the server ended the session, and not after a sign-out", async () => {
    const page = await browser.newPage();
    await page.goto(base + "/?p=jobs");
    await signIn(page, "root", "root password");
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    const token = await page.evaluate(() => localStorage.getItem("jobhouse.refresh_token"));
    expect((await h.http("POST", "/api/v0/auth/logout", { refresh_token: token })).status).toBe(204);
    clock.advance((ACCESS_TTL_S + 5) * 1000);
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    await page.getByRole("status").filter({ hasText: "Your session has ended (it expired or was revoked): sign in again." }).waitFor();
    await signIn(page, "root", "root password");
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    await page.close();
  });

  // Found by trying the product: the other tabs kept their access token, and went on reading and
  // acting as the user for up to its lifetime (30 minutes by default) after the sign-out.
  it("signs out every tab of the browser when one signs out", async () => {
    const context = await browser.newContext();
    const first = await context.newPage();
    await first.goto(base + "/?p=jobs");
    await signIn(first, "root", "root password");
    await first.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    const second = await context.newPage();
    await second.goto(base + "/?p=workers");
    await second.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    await first.getByRole("button", { name: "Sign out" }).click();
    await first.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    await second.getByRole("heading", { level: 1, name: "Sign in" }).waitFor({ timeout: 5_000 });
    await context.close();
  });
});
