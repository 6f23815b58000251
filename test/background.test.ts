// The background loop, driven by a controllable clock: lost workers (late results change nothing),
// the scheduler (one fire per due time, missed runs collapse, time zones) and retention.

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type BackgroundDeps, applyRetention, fireDueSchedules, reapLostWorkers, startBackgroundLoop } from "../src/engine/background.js";
import { dropObjectsOfJobs } from "../src/engine/cleanup.js";
import { recordLoginFailure } from "../src/store/login-failures.js";
import { insertWorker } from "../src/store/workers.js";
import { ManualClock } from "../src/core/clock.js";
import { silentLogger } from "../src/core/log.js";
import type { JobDetail } from "../src/models/jobs.js";
import type { TaskDetail } from "../src/models/tasks.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, waitFor, waitForJob, withEngine } from "./support/engine.js";
import { storeOutage } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("background loop", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  const deps = (clock: ManualClock | { now(): number }): BackgroundDeps => ({
    db: h.service.db,
    ids: h.service.ids,
    clock,
    config: h.service.config,
    log: silentLogger,
    jobs: h.service.jobs,
    changes: h.service.changes,
  });

  it("declares a silent worker LOST, retries its task, and ignores the lost attempt's late result", async () => {
    const engine = await withEngine(h, 2);
    try {
      const started = (await h.call("run_job", { name: entry("lingeringJob"), kwargs: { ms: 1200 } })) as { id: string };
      const first = await waitFor("the lingering task to run", async () => {
        const job = (await h.call("get_job", { ref: started.id })) as JobDetail;
        return job.tasks.find((t) => t.name === "lingering" && t.status === "RUNNING");
      });
      const lostWorker = engine.worker().id;
      // The worker went silent: its last heartbeat is older than SERVICE_WORKER_TIMEOUT.
      const silentSince = Date.now() - (h.service.config.workerTimeoutS + 60) * 1000;
      await h.service.db.updateTable("workers").set({ last_heartbeat: silentSince }).where("id", "=", lostWorker).execute();
      expect(await reapLostWorkers(deps({ now: () => Date.now() }))).toBe(1);
      const workers = (await h.http("GET", `/api/v0/workers?status=LOST`)).body as { items: { id: string }[] };
      expect(workers.items.map((w) => w.id)).toContain(lostWorker.toString());
      const retried = (await h.call("get_task", { id: first.id })) as TaskDetail;
      expect(retried).toMatchObject({ status: "PENDING", attempt: 2, worker_id: null });
      expect(retried.error).toMatch(/was lost while running attempt 1/);

      const job = await waitForJob(h, started.id);
      expect(job.status).toBe("COMPLETED");
      const done = (await h.call("get_task", { id: first.id })) as TaskDetail;
      // Attempt 2's result stands; attempt 1 finished later on the lost worker and was discarded.
      expect(done.result_ref).toEqual({ attempt: 2 });
      expect(done.worker_id).not.toBe(lostWorker.toString());
      // The lost worker learns it from a claim or a heartbeat ("worker declared lost") or from its
      // check of running tasks ("reassigned"), whichever comes first; either way attempt 1 ends late.
      await waitFor("attempt 1 to finish late", async () =>
        /worker declared lost|cancelled or reassigned|result discarded/.test(
          ((await h.call("get_task_logs", { id: first.id, attempt: 1 })) as { content: string }).content,
        ),
      );
    } finally {
      await engine.stop();
    }
  });

  it("heartbeats well inside a short SERVICE_WORKER_TIMEOUT", async () => {
    const quick = await startHarness(backend, { SERVICE_WORKER_TIMEOUT: "1" });
    const engine = await withEngine(quick);
    try {
      // Wait until the worker has lived past the 1 s timeout on heartbeats alone.
      const since = Date.now();
      await waitFor("heartbeats past the timeout", async () => {
        const row = await quick.service.db.selectFrom("workers").select("last_heartbeat").where("id", "=", engine.worker().id).executeTakeFirst();
        return Date.now() - since > 1500 && row !== undefined && Number(row.last_heartbeat) > since + 1000;
      });
      const quickDeps: BackgroundDeps = { db: quick.service.db, ids: quick.service.ids, clock: { now: () => Date.now() }, config: quick.service.config, log: silentLogger, jobs: quick.service.jobs, changes: quick.service.changes };
      expect(await reapLostWorkers(quickDeps)).toBe(0);
    } finally {
      await engine.stop();
      await quick.close();
    }
  });

  // Found by trying the product: a PostgreSQL outage longer than SERVICE_WORKER_TIMEOUT made every
  // live worker LOST the moment it ended (they had been unable to heartbeat, as the loop had been
  // unable to look); they exited and their running tasks ran twice.
  it("counts a worker's silence only from when the loop could see the store again", async () => {
    const clock = new ManualClock(Date.now());
    const timeoutMs = h.service.config.workerTimeoutS * 1000;
    const outage = storeOutage(h.service.db);
    const silentWorker = async () => {
      const id = h.service.ids.next();
      await insertWorker(h.service.db, { id, hostname: "elsewhere", pid: 1, concurrency: 1, maxTasks: null, nowMs: clock.now() - timeoutMs - 1000 });
      return id;
    };
    const statusOf = async (id: bigint) => (await h.service.db.selectFrom("workers").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status;
    const ticks = () => new Promise((resolve) => setTimeout(resolve, 150));
    const loop = startBackgroundLoop({ ...deps(clock), db: outage.db, sweepObjects: undefined }, 20, Number.MAX_SAFE_INTEGER);
    try {
      // A loop that has just started has watched no worker for a whole timeout yet.
      const first = await silentWorker();
      await ticks();
      expect(await statusOf(first)).toBe("ACTIVE");
      clock.advance(timeoutMs + 1);
      await waitFor("the silent worker to be LOST", async () => (await statusOf(first)) === "LOST");
      // The store stops answering, then answers again: silence is counted from then.
      outage.down = true;
      await ticks();
      const second = await silentWorker();
      clock.advance(timeoutMs * 2);
      await ticks();
      outage.down = false;
      await ticks();
      expect(await statusOf(second)).toBe("ACTIVE");
      clock.advance(timeoutMs + 1);
      await waitFor("the second silent worker to be LOST", async () => (await statusOf(second)) === "LOST");
    } finally {
      outage.down = false;
      await loop.stop();
    }
  });

  it("never declares a worker of its own process lost", async () => {
    const engine = await withEngine(h, 1);
    try {
      const id = engine.worker().id;
      await h.service.db.updateTable("workers").set({ last_heartbeat: Date.now() - 3_600_000 }).where("id", "=", id).execute();
      // A task blocked the event loop for an hour: the worker and this loop resume together.
      expect(await reapLostWorkers({ ...deps({ now: () => Date.now() }), ownWorkers: () => [id] })).toBe(0);
      const worker = (await h.http("GET", `/api/v0/workers?status=ACTIVE`)).body as { items: { id: string }[] };
      expect(worker.items.map((w) => w.id)).toContain(id.toString());
    } finally {
      await engine.stop();
    }
  });

  it("fires a schedule once per due time, collapses missed runs, and is safe with two loops", async () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    const clock = new ManualClock(t0);
    const ctx = { ...h.service, clock, principal: SYNTHETIC_ADMIN };
    const registered = (await invoke(
      operationByName.get("register_job")!,
      { entrypoint: entry("hello"), name: "every5", schedule: "*/5 * * * *", defaults: { who: "cron" } },
      ctx,
    )) as { next_run_at: string };
    expect(registered.next_run_at).toBe("2026-11-22T10:05:00.000Z");

    clock.set(t0 + 60_000);
    expect(await fireDueSchedules(deps(clock))).toEqual([]);
    clock.set(Date.UTC(2026, 10, 22, 10, 5, 0));
    expect(await fireDueSchedules(deps(clock))).toEqual(["every5"]);
    expect(await fireDueSchedules(deps(clock))).toEqual([]);

    // An hour passes with nothing running: eleven fire times were missed, one run is owed.
    clock.set(Date.UTC(2026, 10, 22, 11, 7, 0));
    const [a, b] = await Promise.all([fireDueSchedules(deps(clock)), fireDueSchedules(deps(clock))]);
    expect([...a, ...b]).toEqual(["every5"]);
    const runs = (await h.http("GET", "/api/v0/jobs?name=every5")).body as { items: { run_type: string }[]; total: number };
    expect(runs.total).toBe(2);
    expect(runs.items.every((j) => j.run_type === "SCHEDULED")).toBe(true);
    const next = (await h.http("GET", "/api/v0/registered-jobs?name=every5")).body as { items: { next_run_at: string }[] };
    expect(next.items[0]!.next_run_at).toBe("2026-11-22T11:10:00.000Z");
    const detail = (await h.call("get_job", { ref: "every5" })) as { kwargs: unknown };
    expect(detail.kwargs).toEqual({ who: "cron" });

    // A disabled schedule does not fire.
    await invoke(operationByName.get("disable_job")!, { name: "every5" }, ctx);
    clock.set(Date.UTC(2026, 10, 22, 12, 0, 0));
    expect(await fireDueSchedules(deps(clock))).toEqual([]);
  });

  // Found by trying the product: replaced in the second between its fire time and the scheduler's
  // next tick, a registration moved on to its next fire, and the due run never happened.
  it("a replace keeps a fire that is due and not yet taken, and fires it with the new defaults", async () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    const clock = new ManualClock(t0);
    const ctx = { ...h.service, clock, principal: SYNTHETIC_ADMIN };
    const register = (who: string) =>
      invoke(operationByName.get("register_job")!, { entrypoint: entry("hello"), name: "due_replace", schedule: "*/5 * * * *", defaults: { who }, replace: true }, ctx) as Promise<{ next_run_at: string }>;
    expect((await register("old")).next_run_at).toBe("2026-11-22T10:05:00.000Z");
    clock.set(Date.UTC(2026, 10, 22, 10, 5, 0, 400));
    expect((await register("new")).next_run_at).toBe("2026-11-22T10:05:00.000Z");
    expect(await fireDueSchedules(deps(clock))).toEqual(["due_replace"]);
    expect(((await h.call("get_job", { ref: "due_replace" })) as { kwargs: unknown }).kwargs).toEqual({ who: "new" });
    // Not due: a replace moves the next fire as the new schedule says.
    const replaced = (await invoke(operationByName.get("register_job")!, { entrypoint: entry("hello"), name: "due_replace", schedule: "0 * * * *", replace: true }, ctx)) as { next_run_at: string };
    expect(replaced.next_run_at).toBe("2026-11-22T11:00:00.000Z");
    // A replace without a schedule leaves nothing to fire.
    const unscheduled = (await invoke(operationByName.get("register_job")!, { entrypoint: entry("hello"), name: "due_replace", replace: true }, ctx)) as { next_run_at: string | null };
    expect(unscheduled.next_run_at).toBeNull();
  });

  it("enable_job of a schedule that is already enabled keeps a missed fire owed", async () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    const clock = new ManualClock(t0);
    const ctx = { ...h.service, clock, principal: SYNTHETIC_ADMIN };
    await invoke(operationByName.get("register_job")!, { entrypoint: entry("hello"), name: "hourly_owed", schedule: "0 * * * *" }, ctx);
    // 11:00 passed with no background process running; an operator enables the job again (idempotent).
    clock.set(Date.UTC(2026, 10, 22, 11, 30, 0));
    const enabled = (await invoke(operationByName.get("enable_job")!, { name: "hourly_owed" }, ctx)) as { next_run_at: string };
    expect(enabled.next_run_at).toBe("2026-11-22T11:00:00.000Z");
    expect(await fireDueSchedules(deps(clock))).toEqual(["hourly_owed"]);
    // Enabling a disabled job still owes nothing for the time it was off.
    await invoke(operationByName.get("disable_job")!, { name: "hourly_owed" }, ctx);
    clock.set(Date.UTC(2026, 10, 22, 14, 30, 0));
    const again = (await invoke(operationByName.get("enable_job")!, { name: "hourly_owed" }, ctx)) as { next_run_at: string };
    expect(again.next_run_at).toBe("2026-11-22T15:00:00.000Z");
  });

  it("applies the schema's defaults to a scheduled run, and records a run its schema refuses as FAILED", async () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    const clock = new ManualClock(t0);
    const ctx = { ...h.service, clock, principal: SYNTHETIC_ADMIN };
    await invoke(operationByName.get("register_job")!, { entrypoint: entry("typed"), name: "typed_cron", schedule: "*/5 * * * *", defaults: { n: 3 } }, ctx);
    clock.set(Date.UTC(2026, 10, 22, 10, 5, 0));
    expect(await fireDueSchedules(deps(clock))).toEqual(["typed_cron"]);
    const good = (await h.call("get_job", { ref: "typed_cron" })) as { kwargs: unknown; status: string };
    expect(good.kwargs).toEqual({ n: 3 });

    // The job's schema changed since it was registered: its defaults no longer fit.
    await h.service.db.updateTable("registered_jobs").set({ defaults: JSON.stringify({ n: "three", label: 7 }) }).where("name", "=", "typed_cron").execute();
    clock.set(Date.UTC(2026, 10, 22, 10, 10, 0));
    expect(await fireDueSchedules(deps(clock))).toEqual(["typed_cron"]);
    const refused = (await h.call("get_job", { ref: "typed_cron" })) as { status: string; error: string; tasks: { status: string; started_at: string | null; error: string | null }[] };
    expect(refused.status).toBe("FAILED");
    expect(refused.error).toMatch(/kwargs\.n: .*; kwargs\.label: /);
    expect(refused.tasks).toHaveLength(1);
    expect(refused.tasks[0]).toMatchObject({ status: "FAILED", started_at: null });
  });

  it("evaluates a schedule in its IANA time zone", async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    const registered = (await invoke(
      operationByName.get("register_job")!,
      { entrypoint: entry("hello"), name: "ny_morning", schedule: "0 9 * * *", timezone: "America/New_York" },
      { ...h.service, clock, principal: SYNTHETIC_ADMIN },
    )) as { next_run_at: string; timezone: string };
    // 09:00 in New York in late November is 14:00 UTC (EST, UTC-5).
    expect(registered.next_run_at).toBe("2026-11-22T14:00:00.000Z");
    expect(registered.timezone).toBe("America/New_York");
    // Found by trying the product: a zone in other letter case was stored as given, not as its name.
    const spelled = (await h.call("register_job", { entrypoint: entry("hello"), name: "ny_spelled", schedule: "0 9 * * *", timezone: "america/new_york" })) as { timezone: string };
    expect(spelled.timezone).toBe("America/New_York");
    // Only the case: a current IANA name is not replaced by ICU's older one (Asia/Calcutta).
    const kolkata = (await h.call("register_job", { entrypoint: entry("hello"), name: "kolkata", schedule: "0 9 * * *", timezone: "Asia/Kolkata" })) as { timezone: string };
    expect(kolkata.timezone).toBe("Asia/Kolkata");
    // Found by trying the product: UTC and the Etc/ zones are not in the zone list, so "utc" stayed "utc".
    for (const [given, stored] of [["utc", "UTC"], ["etc/gmt+5", "Etc/GMT+5"]]) {
      const view = (await h.call("register_job", { entrypoint: entry("hello"), name: `zone_${stored!.replace(/\W/g, "_")}`, schedule: "0 9 * * *", timezone: given })) as { timezone: string };
      expect(view.timezone, given).toBe(stored);
    }
  });

  it("retention deletes old terminal jobs with their tasks and logs", async () => {
    const engine = await withEngine(h);
    let job: JobDetail;
    try {
      job = await runAndWait(h, entry("flaky"), { failures: 1 });
    } finally {
      await engine.stop();
    }
    // Its earlier attempts go with it too.
    const attemptsOf = () => h.service.db.selectFrom("task_attempts").select("attempt").where("job_id", "=", BigInt(job.id)).execute();
    expect(await attemptsOf()).toHaveLength(1);
    const logDir = join(h.service.config.logDir, job.id);
    expect(existsSync(logDir)).toBe(true);
    const young = new ManualClock(Date.now() + 86_400_000);
    expect(await applyRetention(deps(young))).toBe(0);
    const old = new ManualClock(Date.now() + (h.service.config.jobTtlDays + 1) * 86_400_000);
    expect(await applyRetention(deps(old))).toBeGreaterThanOrEqual(1);
    expect((await h.http("GET", `/api/v0/jobs/${job.id}`)).status).toBe(404);
    expect((await h.http("GET", `/api/v0/tasks/${job.tasks[0]!.id}`)).status).toBe(404);
    expect(await attemptsOf()).toEqual([]);
    expect(existsSync(logDir)).toBe(false);
  });

  // Found by trying the product: retention dropped a FULL run's temp objects with it, though a
  // younger re-run's reused task still named them (its result then named an object that was gone).
  it("retention hands a deleted job's temp objects to the re-run that reused them, and drops them with it", async () => {
    const engine = await withEngine(h, 2);
    try {
      const dir = mkdtempSync(join(tmpdir(), "jobhouse-retention-"));
      const log = join(dir, "log");
      const gate = join(dir, "gate");
      const run = async (request: Record<string, unknown>) => waitForJob(h, ((await h.call("run_job", request)) as { id: string }).id);
      const failed = await run({ name: "test/fixtures/rerun-jobs.ts:staged", kwargs: { log, gate }, preservation_mode: "FULL" });
      expect(failed.status).toBe("FAILED");
      writeFileSync(gate, "");
      const rerun = await run({ rerun_of: failed.id });
      expect(rerun.status).toBe("COMPLETED");
      expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual(["S", "U", "U"]);
      const staged = (await h.call("get_task", { id: rerun.tasks.find((t) => t.name === "stage")!.id })) as TaskDetail;
      const table = (staged.result_ref as { object: string }).object;
      const owner = async () => (await h.service.db.selectFrom("data_objects").select("job_id").where("table_name", "=", table).executeTakeFirst())?.job_id;
      expect(await owner()).toBe(BigInt(failed.id));

      const retention = (clock: ManualClock) => applyRetention({ ...deps(clock), onJobsDeleted: (ids) => dropObjectsOfJobs(h.service.db, h.service.columns, ids) });
      const expire = (id: string) => h.service.db.updateTable("jobs").set({ completed_at: 0 }).where("id", "=", BigInt(id)).execute();
      await expire(failed.id);
      expect(await retention(new ManualClock(Date.now()))).toBe(1);
      expect((await h.http("GET", `/api/v0/jobs/${failed.id}`)).status).toBe(404);
      expect((await h.http("GET", `/api/v0/objects/${table}`)).status).toBe(200);
      expect(await owner()).toBe(BigInt(rerun.id));

      await expire(rerun.id);
      expect(await retention(new ManualClock(Date.now()))).toBe(1);
      expect((await h.http("GET", `/api/v0/objects/${table}`)).status).toBe(404);
    } finally {
      await engine.stop();
    }
  });

  // Failed logins were deleted only by a successful login of the same name, or of anyone: guessed
  // usernames that never log in kept their rows forever.
  it("retention deletes failed logins that count no more, and keeps the ones that do", async () => {
    const { db, ids } = h.service;
    const now = Date.now();
    for (const [username, age] of [["guess-old", 16 * 60_000], ["guess-recent", 60_000]] as const) {
      await recordLoginFailure(db, ids.next(), username, now - age);
    }
    await applyRetention(deps(new ManualClock(now)));
    const left = await db.selectFrom("login_failures").select("username").where("username", "like", "guess-%").execute();
    expect(left.map((r) => r.username)).toEqual(["guess-recent"]);
  });

  // Found by trying the product: STOPPED and LOST workers stayed in the list for ever.
  it("retention deletes workers that ended before the jobs' window, and keeps the others", async () => {
    const { db, ids } = h.service;
    const now = Date.now();
    const old = now - (h.service.config.jobTtlDays + 1) * 86_400_000;
    const made: Record<string, bigint> = {};
    for (const [label, status, at] of [["stopped-old", "STOPPED", old], ["lost-old", "LOST", old], ["stopped-new", "STOPPED", now], ["active-old", "ACTIVE", old]] as const) {
      made[label] = ids.next();
      await insertWorker(db, { id: made[label]!, hostname: label, pid: 1, concurrency: 1, maxTasks: null, nowMs: at });
      await db.updateTable("workers").set({ status, stopped_at: status === "STOPPED" ? at : null }).where("id", "=", made[label]!).execute();
    }
    // A kept job's task ran on one ended worker, an earlier attempt of it on another (found by
    // trying the product: the task's log then named no host, and its worker link was a 404).
    for (const label of ["stopped-old-ran-a-task", "lost-old-ran-an-attempt"]) {
      made[label] = ids.next();
      await insertWorker(db, { id: made[label]!, hostname: label, pid: 1, concurrency: 1, maxTasks: null, nowMs: old });
      await db.updateTable("workers").set({ status: "LOST" }).where("id", "=", made[label]!).execute();
    }
    const run = (await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/jobs.ts:hello" })).body as { id: string };
    const task = await db.selectFrom("tasks").select(["id", "job_id"]).where("job_id", "=", BigInt(run.id)).executeTakeFirstOrThrow();
    await db.updateTable("tasks").set({ worker_id: made["stopped-old-ran-a-task"]! }).where("id", "=", task.id).execute();
    await db.insertInto("task_attempts").values({ task_id: task.id, attempt: 1, job_id: task.job_id, worker_id: made["lost-old-ran-an-attempt"]!, started_at: old, ended_at: old, log_path: null, error: "lost" }).execute();
    await applyRetention(deps(new ManualClock(now)));
    const left = await db.selectFrom("workers").select("hostname").where("id", "in", Object.values(made)).execute();
    expect(left.map((r) => r.hostname).sort()).toEqual(["active-old", "lost-old-ran-an-attempt", "stopped-new", "stopped-old-ran-a-task"]);
    await db.deleteFrom("task_attempts").where("task_id", "=", task.id).execute();
    await db.updateTable("tasks").set({ worker_id: null }).where("id", "=", task.id).execute();
    await db.deleteFrom("workers").where("id", "in", Object.values(made)).execute();
  });
});
