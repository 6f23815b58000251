// Helpers for engine tests: an in-process engine on a harness, and waiting for jobs to settle.

import { type EngineRuntime, startEngine } from "../../src/app/engine-runtime.js";
import { type JobDetail, TERMINAL_JOB_STATUSES } from "../../src/models/jobs.js";
import type { Harness } from "./harness.js";

export async function withEngine(h: Harness, concurrency = 4): Promise<EngineRuntime> {
  return startEngine(h.service, { concurrency, background: false, cancelGraceMs: 300, keepAlive: true });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, limitMs = 15_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls get_job until the job is terminal; fails after `limitMs` (a bound, not a timing assertion). */
export async function waitForJob(h: Harness, id: string, limitMs = 30_000): Promise<JobDetail> {
  return waitFor(`job ${id} to end`, async () => {
    const job = (await h.call("get_job", { ref: id })) as JobDetail;
    return TERMINAL_JOB_STATUSES.includes(job.status) ? job : null;
  }, limitMs);
}

/** Waits for the job's task named `name` to exist (a job's tasks are made as its entry task runs). */
export async function waitForTask(h: Harness, jobId: string, name: string): Promise<JobDetail["tasks"][number]> {
  return waitFor(`task ${name} of job ${jobId}`, async () => ((await h.call("get_job", { ref: jobId })) as JobDetail).tasks.find((t) => t.name === name));
}

export async function runAndWait(h: Harness, name: string, kwargs: Record<string, unknown> = {}): Promise<JobDetail> {
  const job = (await h.call("run_job", { name, kwargs })) as { id: string };
  return waitForJob(h, job.id);
}

export const FIXTURES = "test/fixtures/jobs.ts";
export const entry = (exportName: string) => `${FIXTURES}:${exportName}`;
