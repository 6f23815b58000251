// One run planner for run_job and the scheduler: a job's own retries, timeout and backoff govern
// its entry task however the run started (two bugs: schedules ignored them, backoff was fixed at 1 s).

import { afterAll, beforeAll, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import { silentLogger } from "../src/core/log.js";
import { fireDueSchedules } from "../src/engine/background.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { forEachBackend } from "./support/backends.js";
import { entry } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("the run planner", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  const entryTask = (jobId: string) =>
    h.service.db
      .selectFrom("tasks")
      .select(["max_attempts", "timeout_ms", "backoff_ms"])
      .where("job_id", "=", BigInt(jobId))
      .where("kind", "=", "job")
      .executeTakeFirstOrThrow();
  const settings = async (jobId: string) => {
    const row = await entryTask(jobId);
    return { attempts: Number(row.max_attempts), timeoutMs: row.timeout_ms === null ? null : Number(row.timeout_ms), backoffMs: Number(row.backoff_ms) };
  };
  const tuned = { attempts: 3, timeoutMs: 7000, backoffMs: 30_000 };

  it("gives a manual run's entry task the job's retries, timeout and backoff", async () => {
    const job = (await h.call("run_job", { name: entry("tuned") })) as { id: string };
    expect(await settings(job.id)).toEqual(tuned);
  });

  it("gives a scheduled run's entry task the same", async () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    const clock = new ManualClock(t0);
    await invoke(operationByName.get("register_job")!, { entrypoint: entry("tuned"), name: "tuned_every5", schedule: "*/5 * * * *" }, { ...h.service, clock, principal: SYNTHETIC_ADMIN });
    clock.set(Date.UTC(2026, 10, 22, 10, 5, 0));
    const deps = { db: h.service.db, ids: h.service.ids, clock, config: h.service.config, log: silentLogger, jobs: h.service.jobs, changes: h.service.changes };
    expect(await fireDueSchedules(deps)).toEqual(["tuned_every5"]);
    const scheduled = (await h.call("get_job", { ref: "tuned_every5" })) as { id: string; run_type: string };
    expect(scheduled.run_type).toBe("SCHEDULED");
    expect(await settings(scheduled.id)).toEqual(tuned);
  });

  it("keeps the defaults for a job that declares none", async () => {
    const job = (await h.call("run_job", { name: entry("hello") })) as { id: string };
    expect(await settings(job.id)).toEqual({ attempts: 1, timeoutMs: null, backoffMs: 1000 });
  });
});
