// At-least-once made safe: a task that applies its effect and then loses its attempt is retried,
// and effectKey (the same on every attempt of a task, different across tasks) lets it skip the
// effect the second time.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { effectKey } from "../src/sdk/index.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

it("effectKey is stable per task and distinct across tasks and runs", () => {
  expect(effectKey({ job_id: "1", task_id: "2" })).toBe(effectKey({ job_id: "1", task_id: "2" }));
  expect(effectKey({ job_id: "1", task_id: "2" })).not.toBe(effectKey({ job_id: "1", task_id: "3" }));
  expect(effectKey({ job_id: "1", task_id: "2" }, "email")).not.toBe(effectKey({ job_id: "1", task_id: "2" }, "invoice"));
});

forEachBackend("idempotent effects", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  let dir: string;
  beforeAll(async () => {
    h = await startHarness(backend);
    engine = await withEngine(h, 4);
    dir = mkdtempSync(join(tmpdir(), "jobhouse-once-"));
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("retried tasks apply each effect once", async () => {
    const file = join(dir, "effects.log");
    const keys = join(dir, "keys");
    mkdirSync(keys);
    const job = await runAndWait(h, "test/fixtures/side-effects.ts:onceEffects", { file, keys, n: 20 });
    expect(job.status).toBe("COMPLETED");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    // Twenty tasks, each run twice (the first attempt failed after its effect), twenty effects.
    expect(lines).toHaveLength(20);
    expect(new Set(lines.map((l) => l.split(" ")[0])).size).toBe(20);
    expect(lines.every((l) => l.endsWith(" 1"))).toBe(true);
    const tasks = job.tasks.filter((t) => t.name === "once_effect");
    expect(tasks).toHaveLength(20);
  });
});
