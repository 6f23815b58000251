// Task logs of deleted jobs go from the worker's own disk (engine/log-sweep.ts), on both backends:
// in distributed mode retention runs on the background machine, which cannot reach them. Only the
// jobs the store's tombstones name go.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { createLogger } from "../src/core/log.js";
import { startLogSweep, sweepDeletedJobLogs } from "../src/engine/log-sweep.js";
import { deleteJob, pruneDeletedJobs } from "../src/store/jobs.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("task log sweep", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  beforeAll(async () => {
    h = await startHarness(backend);
    engine = await withEngine(h);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("removes the log folders of jobs this deployment deleted, and nothing else", async () => {
    const { logDir } = h.config;
    const kept = await runAndWait(h, entry("hello"));
    const gone = await runAndWait(h, entry("hello"));
    for (const job of [kept, gone]) expect(existsSync(join(logDir, job.id))).toBe(true);
    // Deleted where this process cannot reach its logs (retention on the background machine).
    await deleteJob(h.service.db, BigInt(gone.id));
    expect(existsSync(join(logDir, gone.id))).toBe(true);
    // Named like a job but no job of ours (found by review: another deployment's logs sharing the
    // folder, a store this worker is not, an operator's): never removed.
    const foreign = join(logDir, "912000000000000001");
    mkdirSync(join(foreign, "912000000000000002"), { recursive: true });
    writeFileSync(join(foreign, "912000000000000002", "1.log"), "a line\n");
    mkdirSync(join(logDir, "workers"), { recursive: true });
    writeFileSync(join(logDir, "notes.txt"), "mine\n");
    mkdirSync(join(logDir, "99999999999999999999"));
    mkdirSync(join(logDir, "0123"));
    expect(await sweepDeletedJobLogs(h.service.db, logDir)).toBe(1);
    expect(existsSync(join(logDir, gone.id))).toBe(false);
    for (const name of [kept.id, "912000000000000001", "workers", "notes.txt", "99999999999999999999", "0123"]) expect(existsSync(join(logDir, name)), name).toBe(true);
    expect(await sweepDeletedJobLogs(h.service.db, logDir)).toBe(0);
    expect(await sweepDeletedJobLogs(h.service.db, join(logDir, "never-made"))).toBe(0);
    // Retention prunes tombstones past their time.
    await pruneDeletedJobs(h.service.db, Date.now() + 1);
    expect(await h.service.db.selectFrom("deleted_jobs").select("job_id").execute()).toEqual([]);
  });

  it("sweeps on its schedule and says what it removed", async () => {
    const lines: string[] = [];
    const job = await runAndWait(h, entry("hello"));
    await deleteJob(h.service.db, BigInt(job.id));
    const stop = startLogSweep({ db: h.service.db, logDir: h.config.logDir, log: createLogger("info", (line) => lines.push(line)) }, 60_000, 10);
    try {
      await vi.waitFor(() => expect(lines.join("")).toContain(`INFO removed the task logs of 1 deleted job(s) from ${h.config.logDir}`), { timeout: 10_000 });
      expect(existsSync(join(h.config.logDir, job.id))).toBe(false);
    } finally {
      stop();
    }
  });
});
