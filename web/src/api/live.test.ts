import { describe, expect, it } from "vitest";
import { isAffected } from "./live.js";

describe("which queries an event makes stale", () => {
  const job = { type: "job.updated", data: { id: "7", name: "etl", status: "COMPLETED" } } as const;
  const task = { type: "task.updated", data: { id: "70", job_id: "7", status: "RUNNING", attempt: 1 } } as const;

  it("a job's change: the job lists, that job's views, registered jobs; not other jobs, tasks or objects", () => {
    for (const path of ["/jobs", "/jobs?limit=50", "/jobs/7", "/jobs/7/stats", "/registered-jobs?limit=100"]) expect(isAffected(path, job), path).toBe(true);
    for (const path of ["/jobs/70", "/jobs/8", "/tasks/70", "/objects", "/workers"]) expect(isAffected(path, job), path).toBe(false);
  });

  it("a task's change: job lists (their counts), its job, itself; not a job whose id starts alike", () => {
    for (const path of ["/jobs?status=RUNNING", "/jobs/7", "/jobs/7/stats", "/tasks/70", "/tasks/70/logs?attempt=1"]) expect(isAffected(path, task), path).toBe(true);
    for (const path of ["/jobs/77", "/tasks/7", "/tasks/701", "/objects"]) expect(isAffected(path, task), path).toBe(false);
  });

  it("a resync: everything", () => {
    expect(isAffected("/objects", { type: "resync", data: { reason: "r" } })).toBe(true);
  });
});
