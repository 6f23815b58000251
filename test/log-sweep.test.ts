// Task logs of deleted jobs go from the worker's own disk (engine/log-sweep.ts), on both backends:
// in distributed mode retention runs on the background machine, which cannot reach them.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { createLogger } from "../src/core/log.js";
import { startLogSweep, sweepDeletedJobLogs } from "../src/engine/log-sweep.js";
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

  it("removes the log folders of jobs the store no longer has, and nothing else", async () => {
    const { logDir } = h.config;
    const kept = await runAndWait(h, entry("hello"));
    expect(existsSync(join(logDir, kept.id))).toBe(true);
    // A deleted job's folder, as a worker on another machine than the deletion leaves it.
    const deleted = join(logDir, "912000000000000001");
    mkdirSync(join(deleted, "912000000000000002"), { recursive: true });
    writeFileSync(join(deleted, "912000000000000002", "1.log"), "a line\n");
    // Not a job's: spawned workers' output, and anything an operator keeps there.
    mkdirSync(join(logDir, "workers"), { recursive: true });
    writeFileSync(join(logDir, "notes.txt"), "mine\n");
    mkdirSync(join(logDir, "99999999999999999999"));
    expect(await sweepDeletedJobLogs(h.service.db, logDir)).toBe(1);
    expect(existsSync(deleted)).toBe(false);
    for (const name of [kept.id, "workers", "notes.txt", "99999999999999999999"]) expect(existsSync(join(logDir, name)), name).toBe(true);
    expect(await sweepDeletedJobLogs(h.service.db, logDir)).toBe(0);
    expect(await sweepDeletedJobLogs(h.service.db, join(logDir, "never-made"))).toBe(0);
  });

  it("sweeps on its schedule and says what it removed", async () => {
    const lines: string[] = [];
    mkdirSync(join(h.config.logDir, "912000000000000003"), { recursive: true });
    const stop = startLogSweep({ db: h.service.db, logDir: h.config.logDir, log: createLogger("info", (line) => lines.push(line)) }, 60_000, 10);
    try {
      await vi.waitFor(() => expect(lines.join("")).toContain(`INFO removed the task logs of 1 deleted job(s) from ${h.config.logDir}`), { timeout: 10_000 });
      expect(existsSync(join(h.config.logDir, "912000000000000003"))).toBe(false);
    } finally {
      stop();
    }
  });
});
