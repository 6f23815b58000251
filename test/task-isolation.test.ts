// Task code runs in worker threads: a task that spins, exits the process, throws outside its
// promise chain or exhausts its heap fails its own attempt, while the server keeps answering and
// the worker keeps running other tasks. Module checks (run_job, register_job) run in threads too.

import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import type { JobDetail } from "../src/models/jobs.js";
import { createLogger } from "../src/core/log.js";
import { forEachBackend } from "./support/backends.js";
import { waitFor, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

const HOSTILE = "test/fixtures/hostile-jobs.ts";
const hostile = (name: string) => `${HOSTILE}:${name}`;

/** The files this process holds open. */
const openFiles = () =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });

async function run(h: Harness, name: string): Promise<JobDetail> {
  const job = (await h.call("run_job", { name })) as { id: string };
  return waitForJob(h, job.id, 60_000);
}

forEachBackend("task isolation", (backend) => {
  const logged: string[] = [];
  let h: Harness;
  let engine: EngineRuntime;
  beforeAll(async () => {
    // Task threads copy the process's environment as they boot (read by the credentials test).
    Object.assign(process.env, { SERVICE_ADMIN_PASSWORD: "an admin password", SERVICE_OPENLINEAGE_TOKEN: "a lineage token", SERVICE_JOB_NOTE: "visible" });
    h = await startHarness(backend, { SERVICE_TASK_MEMORY_MB: "96", SERVICE_MODULE_LOAD_TIMEOUT: "2" }, { log: createLogger("info", (line) => void logged.push(line)) });
    engine = await withEngine(h, 2);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
    for (const name of ["SERVICE_ADMIN_PASSWORD", "SERVICE_OPENLINEAGE_TOKEN", "SERVICE_JOB_NOTE"]) delete process.env[name];
  });

  it("times out a task that never yields while the server keeps answering", async () => {
    const started = (await h.call("run_job", { name: hostile("spinJob") })) as { id: string };
    const latencies: number[] = [];
    let sawSpinning = false;
    // Probe /health for as long as the job runs: every answer is timed, none may stall.
    for (;;) {
      const job = (await h.call("get_job", { ref: started.id })) as JobDetail;
      if (job.status === "FAILED" || job.status === "COMPLETED") break;
      sawSpinning ||= job.tasks.some((t) => t.name === "spin" && t.status === "RUNNING");
      const before = performance.now();
      const health = await h.http("GET", "/health");
      latencies.push(performance.now() - before);
      expect(health.status).toBe(200);
    }
    const job = await waitForJob(h, started.id);
    expect(sawSpinning).toBe(true);
    expect(job.status).toBe("FAILED");
    expect(job.tasks.find((t) => t.name === "spin")!.error).toMatch(/timed out after 2 s/);
    expect(latencies.length).toBeGreaterThan(10);
    // A stalled event loop would hold a probe for the whole 2 s spin (plus its grace).
    expect(Math.max(...latencies)).toBeLessThan(500);
  });

  it("fails a task that calls process.exit, and keeps running others", async () => {
    const job = await run(h, hostile("exitJob"));
    expect(job.status).toBe("FAILED");
    expect(job.tasks.find((t) => t.name === "exit_process")!.error).toMatch(/process\.exit\(3\)/);
    expect((await run(h, hostile("afterJob"))).status).toBe("COMPLETED");
    expect((await h.http("GET", "/health")).status).toBe(200);
  });

  it("fails a task that throws outside its promise chain", async () => {
    const job = await run(h, hostile("throwLaterJob"));
    expect(job.status).toBe("FAILED");
    expect(job.tasks.find((t) => t.name === "throw_later")!.error).toMatch(/outside its promise chain: thrown from a timer/);
  });

  it("work a task left running neither fails nor writes into the next task on its thread", async () => {
    for (let round = 0; round < 2; round++) {
      const job = await run(h, hostile("leftoversJob"));
      expect(job.status, JSON.stringify(job.tasks.map((t) => [t.name, t.status, t.error]))).toBe("COMPLETED");
      const slow = job.tasks.find((t) => t.name === "slow_neighbour")!;
      const { log_path: logPath } = (await h.call("get_task", { id: slow.id })) as { log_path: string };
      expect(readFileSync(logPath, "utf8")).not.toMatch(/tick from an interval/);
    }
    // Its interval is found when the task ends (or, had it been missed, when it writes to the log).
    await waitFor("the leftovers to be reported", async () => logged.some((line) => /task \d+ \(test\/fixtures\/hostile-jobs\.ts:leave_work_behind\) of job \d+ left (work running that (wrote to its log|threw)|\d+ timer\(s\) or interval\(s\) due when it ended).*its thread is replaced/.test(line)));
    expect((await run(h, hostile("afterJob"))).status).toBe("COMPLETED");
  });

  // Found by trying the product: a task that forgot 200 descriptors a run brought the server to its
  // descriptor limit within a hundred runs; an interval left behind burned a core for good; a child
  // process outlived its task's timeout.
  it("replaces the thread of a task that left files open or an interval due, and ends its child processes", async () => {
    const runWith = async (name: string, kwargs: object) => waitForJob(h, ((await h.call("run_job", { name: hostile(name), kwargs })) as { id: string }).id, 60_000);
    const held = () => openFiles().filter((path) => path === "/etc/hostname").length;
    const before = held();
    for (let round = 0; round < 4; round++) expect((await runWith("leakFilesJob", { n: 50 })).status).toBe("COMPLETED");
    // Each run's thread is replaced once it reported: its 52 descriptors close with it.
    await waitFor("the leaky threads' descriptors to close", async () => held() <= before, 20_000);
    expect(logged.filter((line) => / left \d+ file/.test(line)).join("\n")).toMatch(/task \d+ \(test\/fixtures\/hostile-jobs\.ts:leak_files\) of job \d+ left 52 file\(s\) open when it ended: its thread is replaced/);

    expect((await runWith("leaveIntervalJob", {})).status).toBe("COMPLETED");
    await waitFor("the interval to be reported", async () => logged.some((line) => /left 1 timer\(s\) or interval\(s\) due when it ended/.test(line)));

    const file = join(mkdtempSync(join(tmpdir(), "jobhouse-child-")), "pid");
    const timedOut = await runWith("childPastTimeoutJob", { file });
    expect(timedOut.tasks.find((t) => t.name === "child_past_timeout")!.error).toMatch(/timed out after 1 s/);
    const pid = Number(readFileSync(file, "utf8"));
    const alive = () => {
      try {
        // A zombie (ended, not yet waited for) is not running either.
        return !/^\S+ \(\S+\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    await waitFor("the timed-out task's child to end", async () => !alive(), 10_000);
    expect((await run(h, hostile("afterJob"))).status).toBe("COMPLETED");
  });

  // Found by trying the product: a 50 MB result was stored, and every read of its task sent it.
  it("fails a task whose result is over 16 MiB, saying what to do instead", async () => {
    const job = await run(h, hostile("hugeResultJob"));
    expect(job.status).toBe("FAILED");
    expect(job.tasks.find((t) => t.name === "huge_result")!.error).toMatch(/its result is 17\.0 MiB as JSON, over the 16 MiB a result may be: return a data object/);
  });

  it("keeps the service's credentials from task code, and the rest of the environment in reach", async () => {
    const job = await run(h, hostile("environmentJob"));
    expect(job.status).toBe("COMPLETED");
    const seen = job.tasks.find((t) => t.name === "read_environment")!;
    const { result_ref: env } = (await h.call("get_task", { id: seen.id })) as { result_ref: Record<string, string> };
    expect(env.SERVICE_JOB_NOTE).toBe("visible");
    for (const secret of ["SERVICE_ADMIN_PASSWORD", "SERVICE_OPENLINEAGE_TOKEN", "SERVICE_JWT_SECRET", "SERVICE_SQL_URL", "SERVICE_CH_URL", "SERVICE_API_TOKEN"]) expect(env).not.toHaveProperty(secret);
  });

  it("ends the thread of a task that threw outside its promise chain: its timers stop with it", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "jobhouse-interval-")), "ticks");
    const started = (await h.call("run_job", { name: hostile("throwEveryJob"), kwargs: { file } })) as { id: string };
    const job = await waitForJob(h, started.id);
    expect(job.tasks.find((t) => t.name === "throw_every")!.error).toMatch(/outside its promise chain: thrown from an interval/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const size = readFileSync(file).length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(readFileSync(file).length).toBe(size);
    rmSync(dirname(file), { recursive: true, force: true });
  });

  it("fails a task that exceeds its memory limit", async () => {
    const job = await run(h, hostile("memoryJob"));
    expect(job.status).toBe("FAILED");
    expect(job.tasks.find((t) => t.name === "eat_memory")!.error).toMatch(/ran out of memory .*96 MB/);
    expect((await run(h, hostile("afterJob"))).status).toBe("COMPLETED");
  });

  it("cancels a spinning task: its thread is ended and its slot serves the next task", async () => {
    const started = (await h.call("run_job", { name: hostile("spinForeverJob") })) as { id: string };
    await waitFor("the spin to start", async () => {
      const job = (await h.call("get_job", { ref: started.id })) as JobDetail;
      return job.tasks.some((t) => t.name === "spin_forever" && t.status === "RUNNING");
    });
    // The spinning attempt's thread holds its log open ...
    const spin = ((await h.call("get_job", { ref: started.id })) as JobDetail).tasks.find((t) => t.name === "spin_forever")!;
    const { log_path: logPath } = (await h.call("get_task", { id: spin.id })) as { log_path: string };
    expect(openFiles()).toContain(logPath);
    await h.call("cancel_job", { ref: started.id });
    const cancelled = await waitForJob(h, started.id);
    expect(cancelled.status).toBe("CANCELLED");
    // ... which is closed with the thread, and the log says why it ended.
    await waitFor("the spinning attempt's log to be closed", async () => !openFiles().includes(logPath));
    const log = (await h.call("get_task_logs", { id: spin.id })) as { content: string };
    expect(log.content).toMatch(/attempt 1 of \d+ of .*spin_forever.* started on worker[\s\S]*WARNING .*cancel/);
    // Two slots: if the spinning thread were kept, one of these would have to wait forever.
    const [a, b] = await Promise.all([run(h, hostile("afterJob")), run(h, hostile("afterJob"))]);
    expect([a.status, b.status]).toEqual(["COMPLETED", "COMPLETED"]);
  });

  describe("module checks", () => {
    it("refuses a module that exits the process at import; the server lives on", async () => {
      const response = await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/hostile/exit-at-import.mjs:x" });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ code: "invalid", detail: expect.stringMatching(/process\.exit\(1\)/) });
      expect((await h.http("GET", "/health")).status).toBe(200);
      expect((await h.http("POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/hostile/exit-at-import.mjs:x" })).status).toBe(422);
    });

    it("gives up on a module that never finishes loading", async () => {
      const before = performance.now();
      const probes: number[] = [];
      const check = h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/hostile/spin-at-import.mjs:x" });
      let settled = false;
      void check.then(() => (settled = true));
      while (!settled) {
        const t = performance.now();
        expect((await h.http("GET", "/health")).status).toBe(200);
        probes.push(performance.now() - t);
      }
      const response = await check;
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ detail: expect.stringMatching(/did not finish loading within 2 s/) });
      expect(performance.now() - before).toBeGreaterThanOrEqual(2000);
      expect(Math.max(...probes)).toBeLessThan(500);
    });
  });
});

forEachBackend("entrypoint confinement", (backend) => {
  let h: Harness;
  let outside: string;
  let root: string;
  const marker = () => join(outside, "imported.txt");
  beforeAll(async () => {
    // A job root with a symlink that leads out of it, and a module outside every root.
    outside = mkdtempSync(join(tmpdir(), "jobhouse-outside-"));
    root = mkdtempSync(join(tmpdir(), "jobhouse-root-"));
    process.env.JOBHOUSE_TEST_MARKER = marker();
    writeFileSync(join(outside, "marker.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker())}, "imported");\nexport const x = 1;\n`);
    symlinkSync(join(outside, "marker.mjs"), join(root, "link.mjs"));
    writeFileSync(join(root, "inside.ts"), `import { job } from "jobhouse";\nexport const inside = job("inside", async () => 42);\n`);
    h = await startHarness(backend, { SERVICE_JOBS_PATH: root });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(outside, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  });

  it("refuses every way out of the job roots without importing anything", async () => {
    const refused = [
      `${join(outside, "marker.mjs")}:x`, // absolute path outside the roots
      `../${outside.split("/").pop()}/marker.mjs:x`, // a .. escape
      `${root}/../${outside.split("/").pop()}/marker.mjs:x`,
      "link.mjs:x", // a symlink inside that points outside
      `file://${join(outside, "marker.mjs")}:x`,
      `file://${join(outside, "marker.mjs")}?v=1:x`,
      "data:text/javascript,process.exit(1):x",
      "node:fs:x",
      "fs:x",
      "semver:x",
      "@acme/jobs:x",
      `${resolve("node_modules/semver/bin/semver.js")}:x`,
      "https://example.com/x.mjs:x",
    ];
    for (const name of refused) {
      const response = await h.http("POST", "/api/v0/jobs:run", { name });
      expect(response.status, name).toBe(422);
      const detail = (response.body as { detail: string }).detail;
      expect(detail, name).toMatch(/refused|does not exist|must look like/);
      // The refusal names the rule and echoes the request, never where the server keeps its files.
      if (!name.includes(root)) expect(detail, name).not.toContain(root);
      if (!name.includes(process.cwd())) expect(detail, name).not.toContain(process.cwd());
    }
    expect(existsSync(marker())).toBe(false);
  });

  it("runs modules under the job roots, by relative and by absolute path", async () => {
    for (const name of ["inside.ts:inside", `${join(root, "inside.ts")}:inside`]) {
      const response = await h.http("POST", "/api/v0/jobs:run", { name });
      expect(response.status, name).toBe(201);
    }
    // The working directory is no root once SERVICE_JOBS_PATH names the roots.
    expect((await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/jobs.ts:pipeline" })).status).toBe(422);
  });
});

// A job root below the working directory (a worker started in `/`, or in the server's folder):
// task entrypoints were stored relative to the working directory, which no root resolves, so every
// task after the entry failed. Examples run from any folder as `examples/<file>`.
forEachBackend("entrypoints stored relative to their job root", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(process.cwd(), ".test-jobs-root-"));
    writeFileSync(
      join(root, "pipeline.ts"),
      `import { job, task } from "jobhouse";\nexport const add = task("add", async ({ a, b }: { a: number; b: number }) => a + b);\nexport const sums = job("sums", async () => add({ a: await add({ a: 1, b: 2 }), b: 3 }));\n`,
    );
    h = await startHarness(backend, { SERVICE_JOBS_PATH: root });
    engine = await withEngine(h);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("runs a job's tasks from a root inside the working directory, and the examples from anywhere", async () => {
    const run = (await h.call("run_job", { name: "pipeline.ts:sums" })) as { id: string };
    const job = await waitForJob(h, run.id);
    expect(job.status, job.error ?? "").toBe("COMPLETED");
    expect(job.tasks.filter((t) => t.name === "add").map((t) => t.entrypoint)).toEqual(["pipeline.ts:add", "pipeline.ts:add"]);

    const primes = (await h.call("run_job", { name: "examples/primes.ts:countPrimes", kwargs: { limit: 1000, chunks: 2 } })) as { id: string };
    const done = await waitForJob(h, primes.id);
    expect(done.status, done.error ?? "").toBe("COMPLETED");
    // (jobhouse:… are the SDK's built-in tasks, such as map's gather.)
    expect(new Set(done.tasks.map((t) => t.entrypoint.split(":")[0]).filter((module) => module !== "jobhouse"))).toEqual(new Set(["examples/primes.ts"]));
  });
});
