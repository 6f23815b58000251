// An attempt that schedules a very wide fan-out with a fan-in over all of it: every row and every
// dependency edge is stored, however many variables one statement could bind (SQLite: 32,766);
// the job reads a page of tasks at a time with counts over all of them; retention deletes it in
// batches.

import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../src/core/log.js";
import { applyRetention } from "../src/engine/background.js";
import type { JobDetail, JobStatsView } from "../src/models/jobs.js";
import { startRun } from "../src/engine/start-run.js";
import { claimReadyTasks } from "../src/store/claims.js";
import { completeTask } from "../src/store/transitions.js";
import { insertWorker } from "../src/store/workers.js";
import { forEachBackend } from "./support/backends.js";
import { childTaskRow } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

const WIDTH = 100_000;

forEachBackend("a fan-out of 100,000 tasks with a fan-in", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  it("stores every child and every edge of the fan-in", async () => {
    const { db, ids, clock } = h.service;
    const job = await startRun(db, ids, clock, h.service.config, {
      name: "wide",
      entrypoint: "test/fixtures/jobs.ts:fanOut",
      kwargs: {},
      runType: "MANUAL",
      preservationMode: "NONE",
      registeredName: null,
    });
    const workerId = ids.next();
    await insertWorker(db, { id: workerId, hostname: "test", pid: 1, concurrency: 1, maxTasks: null, nowMs: clock.now() });
    const [entry] = (await claimReadyTasks(db, { workerId, limit: 1, nowMs: clock.now(), logDir: "/tmp/jobhouse-test-logs" })).tasks;
    const key = { taskId: entry!.id, workerId, attempt: 1 };

    const row = (kwargs: string) => childTaskRow(h, job.id, kwargs);
    const wide = Array.from({ length: WIDTH }, (_, i) => ({ row: row(`{"x":${i}}`), dependsOn: [] as bigint[] }));
    const gather = { row: { ...row("{}"), name: "sum" }, dependsOn: wide.map((c) => c.row.id) };
    const outcome = await completeTask(db, {
      key,
      resultJson: JSON.stringify({ task_id: gather.row.id.toString() }),
      children: [...wide, gather],
      resultReferences: [gather.row.id],
      nowMs: clock.now(),
    });
    expect(outcome.completed).toBe(true);

    const count = await db.selectFrom("tasks").select((e) => e.fn.countAll().as("n")).where("job_id", "=", job.id).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(WIDTH + 2);
    const edges = await db.selectFrom("task_deps").select((e) => e.fn.countAll().as("n")).where("task_id", "=", gather.row.id).executeTakeFirstOrThrow();
    expect(Number(edges.n)).toBe(WIDTH);
    const sum = await db.selectFrom("tasks").select(["pending_deps", "ready_at"]).where("id", "=", gather.row.id).executeTakeFirstOrThrow();
    expect(Number(sum.pending_deps)).toBe(WIDTH);
    expect(sum.ready_at).toBeNull();
    const ready = await db.selectFrom("tasks").select((e) => e.fn.countAll().as("n")).where("job_id", "=", job.id).where("ready_at", "is not", null).where("status", "=", "PENDING").executeTakeFirstOrThrow();
    expect(Number(ready.n)).toBe(WIDTH);
  });

  it("reads the job a page of tasks at a time, with counts over all of them", async () => {
    // With the statistics autovacuum would take: one task_id then covers every edge (migration 014).
    if (backend.name === "distributed") for (const table of ["tasks", "task_deps"]) await sql.raw(`ANALYZE ${table}`).execute(h.service.db);
    const job = (await h.call("list_jobs", { name: "wide" })) as { items: { id: string }[] };
    const id = job.items[0]!.id;
    const first = (await h.http("GET", `/api/v0/jobs/${id}`)).body as JobDetail;
    expect(first.total_tasks).toBe(WIDTH + 2);
    expect(first.completed_tasks).toBe(1);
    expect(first.tasks).toHaveLength(1_000);
    expect(first.tasks_next_cursor).not.toBeNull();
    const next = (await h.http("GET", `/api/v0/jobs/${id}?tasks_limit=10000&tasks_cursor=${first.tasks_next_cursor}`)).body as JobDetail;
    expect(next.tasks).toHaveLength(10_000);
    expect(BigInt(next.tasks[0]!.id)).toBeGreaterThan(BigInt(first.tasks.at(-1)!.id));
    // The last page holds the fan-in, which waits for every child.
    let page = next;
    while (page.tasks_next_cursor) page = (await h.http("GET", `/api/v0/jobs/${id}?tasks_limit=10000&tasks_cursor=${page.tasks_next_cursor}`)).body as JobDetail;
    expect(page.tasks.at(-1)).toMatchObject({ name: "sum" });
    expect(page.tasks.at(-1)!.depends_on).toHaveLength(WIDTH);
    const stats = (await h.http("GET", `/api/v0/jobs/${id}/stats?tasks_limit=5`)).body as JobStatsView;
    expect(stats.status_counts).toMatchObject({ PENDING: WIDTH + 1, COMPLETED: 1 });
    expect(stats.tasks).toHaveLength(5);
    expect(stats.tasks_next_cursor).not.toBeNull();
    expect((await h.http("GET", `/api/v0/jobs/${id}?tasks_limit=0`)).status).toBe(422);
    expect((await h.http("GET", `/api/v0/jobs/${id}?tasks_cursor=***`)).status).toBe(422);
    // A missing job is reported before a bad cursor.
    for (const path of ["/api/v0/jobs/1?tasks_cursor=***", "/api/v0/jobs/1/stats?tasks_cursor=***"]) expect((await h.http("GET", path)).status, path).toBe(404);
    expect(((await h.http("GET", `/api/v0/jobs/wide?tasks_limit=1`)).body as JobDetail).tasks).toHaveLength(1);
    // Empty is no cursor, as on the lists' `cursor=`.
    const blank = await h.http("GET", `/api/v0/jobs/${id}?tasks_limit=10000&tasks_cursor=`);
    expect(blank.status, JSON.stringify(blank.body)).toBe(200);
    expect((blank.body as JobDetail).tasks[0]!.id).toBe(first.tasks[0]!.id);
  });

  it("retention deletes the job in batches of tasks", async () => {
    const { db, clock, config } = h.service;
    const job = (await h.call("list_jobs", { name: "wide" })) as { items: { id: string }[] };
    const id = BigInt(job.items[0]!.id);
    expect(((await h.call("cancel_job", { ref: String(id) })) as { status: string }).status).toBe("CANCELLED");
    const later = { now: () => clock.now() + (config.jobTtlDays + 1) * 86_400_000 };
    const deps = { db, ids: h.service.ids, clock: later, config, log: silentLogger, jobs: h.service.jobs, changes: h.service.changes };
    expect(await applyRetention(deps)).toBeGreaterThanOrEqual(1);
    const left = await db.selectFrom("tasks").select((e) => e.fn.countAll().as("n")).where("job_id", "=", id).executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
    const edges = await db.selectFrom("task_deps").select((e) => e.fn.countAll().as("n")).executeTakeFirstOrThrow();
    expect(Number(edges.n)).toBe(0);
    expect((await h.http("GET", `/api/v0/jobs/${id}`)).status).toBe(404);
  });
});
