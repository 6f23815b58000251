// Run limits (issue 17 item 2), on both backends with two workers (two claimers on one store):
// a task concurrency key holds across workers and jobs, a registration's max_active_runs holds for
// a burst of runs (the rest wait PENDING), a schedule with overlap "skip" does not fire while the
// limit is reached, and a run's priority decides what is claimed first.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { silentLogger } from "../src/core/log.js";
import { fireDueSchedules } from "../src/engine/background.js";
import type { JobDetail } from "../src/models/jobs.js";
import { forEachBackend } from "./support/backends.js";
import { waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

const LIMITS = "test/fixtures/limit-jobs.ts";

/** The most spans of `log` that overlapped at one moment. */
function mostAtOnce(log: string): number {
  const spans = readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { start: number; end: number });
  const edges = spans.flatMap((s) => [[s.start, 1] as const, [s.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (now += delta));
  return most;
}

forEachBackend("run limits", (backend) => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    h = await startHarness(backend);
    dir = mkdtempSync(join(tmpdir(), "jobhouse-limits-"));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const withTwoWorkers = async <T>(body: () => Promise<T>): Promise<T> => {
    const engines: EngineRuntime[] = [await withEngine(h, 4), await withEngine(h, 4)];
    try {
      return await body();
    } finally {
      await Promise.all(engines.map((e) => e.stop()));
    }
  };

  it("runs at most `limit` tasks of a concurrency key at once, across workers and jobs", async () => {
    const log = join(dir, "keyed.log");
    await withTwoWorkers(async () => {
      const runs = await Promise.all([0, 1].map(() => h.call("run_job", { name: `${LIMITS}:keyed`, kwargs: { log, n: 6, ms: 120 } }) as Promise<{ id: string }>));
      for (const run of runs) expect((await waitForJob(h, run.id, 30_000)).status).toBe("COMPLETED");
    });
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(12);
    expect(mostAtOnce(log)).toBe(2);
  });

  it("keeps a registration to max_active_runs RUNNING runs; a burst waits PENDING and all complete", async () => {
    const log = join(dir, "runs.log");
    await h.call("register_job", { entrypoint: `${LIMITS}:slowRun`, name: "one_at_a_time", max_active_runs: 1, defaults: { log, ms: 150 } });
    const burst = (await Promise.all([0, 1, 2, 3].map(() => h.call("run_job", { name: "one_at_a_time" })))) as { id: string }[];
    await withTwoWorkers(async () => {
      // While the first runs, the others wait.
      const statuses = async () => Promise.all(burst.map(async (r) => ((await h.call("get_job", { ref: r.id })) as JobDetail).status));
      for (let i = 0; i < 20; i++) {
        const now = await statuses();
        expect(now.filter((s) => s === "RUNNING").length).toBeLessThanOrEqual(1);
        if (now.every((s) => s === "COMPLETED")) break;
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
      for (const run of burst) expect((await waitForJob(h, run.id, 30_000)).status).toBe("COMPLETED");
    });
    expect(mostAtOnce(log)).toBe(1);
  });

  it("skips a scheduled fire while max_active_runs runs are under way with overlap skip, and queues it otherwise", async () => {
    const log = join(dir, "overlap.log");
    for (const overlap of ["skip", "queue"] as const) {
      const name = `overlap_${overlap}`;
      await h.call("register_job", { entrypoint: `${LIMITS}:slowRun`, name, schedule: "* * * * *", max_active_runs: 1, overlap, defaults: { log, ms: 10 } });
      await h.call("run_job", { name }); // PENDING: no worker runs now
      await h.service.db.updateTable("registered_jobs").set({ next_run_at: Date.now() - 1000 }).where("name", "=", name).execute();
      const deps = { db: h.service.db, ids: h.service.ids, clock: h.service.clock, config: h.service.config, log: silentLogger, jobs: h.service.jobs, changes: h.service.changes };
      // Before the fire: a minute's boundary between the fire and the check moved "now" past it.
      const firedAt = Date.now();
      const fired = await fireDueSchedules(deps);
      const runs = (await h.http("GET", `/api/v0/jobs?name=${name}`)).body as { total: number };
      expect({ overlap, fired: fired.includes(name), runs: runs.total }).toEqual({ overlap, fired: overlap === "queue", runs: overlap === "queue" ? 2 : 1 });
      const registration = (await h.http("GET", `/api/v0/registered-jobs?name=${name}`)).body as { items: { next_run_at: string; max_active_runs: number; overlap: string }[] };
      expect(Date.parse(registration.items[0]!.next_run_at)).toBeGreaterThan(firedAt);
      expect(registration.items[0]).toMatchObject({ max_active_runs: 1, overlap });
    }
  });

  it("claims a higher-priority run first", async () => {
    const log = join(dir, "priority.log");
    const low = (await h.call("run_job", { name: `${LIMITS}:slowRun`, kwargs: { log, ms: 5 } })) as { id: string };
    const high = (await h.call("run_job", { name: `${LIMITS}:slowRun`, kwargs: { log, ms: 5 }, priority: 10 })) as { id: string };
    const engine = await withEngine(h, 1);
    try {
      const [lowRun, highRun] = [await waitForJob(h, low.id), await waitForJob(h, high.id)];
      expect(Date.parse(highRun.started_at!)).toBeLessThanOrEqual(Date.parse(lowRun.started_at!));
      // One slot: the high-priority run's task ran whole before the low one's started.
      expect(Date.parse(highRun.tasks[0]!.completed_at!)).toBeLessThanOrEqual(Date.parse(lowRun.tasks[0]!.started_at!));
    } finally {
      await engine.stop();
    }
  });
});
