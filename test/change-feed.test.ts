// Every job and task transition reaches the change feed once, from where it committed: run_job,
// the worker's claims and attempts, job completion, and cancel_job.

import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import type { Change } from "../src/engine/changes.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, waitFor, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("the change feed", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  const seen: Change[] = [];
  beforeAll(async () => {
    h = await startHarness(backend);
    h.service.changes.subscribe(({ change }) => seen.push(change));
    engine = await withEngine(h, 2);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("publishes each transition of a run once, in order", async () => {
    const job = await runAndWait(h, entry("pipeline"), { n: 1 });
    expect(job.status).toBe("COMPLETED");
    const ofJob = seen.filter((c) => (c.type === "job" ? c.id.toString() === job.id : c.jobId.toString() === job.id));
    const jobStatuses = ofJob.filter((c) => c.type === "job").map((c) => c.status);
    expect(jobStatuses).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
    for (const task of job.tasks) {
      const statuses = ofJob.filter((c) => c.type === "task" && c.id.toString() === task.id).map((c) => c.status);
      expect(statuses, task.name).toEqual(["CLAIMED", "RUNNING", "COMPLETED"]);
    }
    // The job's end comes after the last task's.
    expect(ofJob[ofJob.length - 1]).toMatchObject({ type: "job", status: "COMPLETED" });
  });

  it("publishes retries with their next attempt, and a cancel", async () => {
    const flaky = await runAndWait(h, entry("flaky"), { failures: 1 });
    const task = flaky.tasks.filter((t) => t.name === "flaky")[1]!; // [0] is the job's entry task, also named flaky
    const statuses = seen.filter((c) => c.type === "task" && c.id.toString() === task.id).map((c) => `${c.status}@${(c as { attempt: number }).attempt}`);
    expect(statuses).toEqual(["CLAIMED@1", "RUNNING@1", "PENDING@2", "CLAIMED@2", "RUNNING@2", "COMPLETED@2"]);

    const slow = (await h.call("run_job", { name: entry("lingeringJob"), kwargs: { ms: 5000 } })) as { id: string };
    await waitFor("the slow task to run", async () => seen.some((c) => c.type === "task" && c.jobId.toString() === slow.id && c.status === "RUNNING"));
    await h.call("cancel_job", { ref: slow.id });
    await waitForJob(h, slow.id);
    expect(seen.filter((c) => c.type === "job" && c.id.toString() === slow.id).map((c) => c.status)).toEqual(["PENDING", "RUNNING", "CANCELLED"]);
  });
});
