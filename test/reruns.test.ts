// Re-runs from failure (issue 17 item 1), on both backends: a diamond whose one branch failed is
// re-run with run_job rerun_of; the tasks that completed are reused (counted by their side effects:
// they do not run again), only the failed branch and what depended on it run, and the result is the
// clean run's. from "all" runs everything again. Identity is the task's place in the graph.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import type { JobDetail } from "../src/models/jobs.js";
import type { TaskDetail } from "../src/models/tasks.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

const DIAMOND = "test/fixtures/rerun-jobs.ts:diamond";

forEachBackend("re-runs from failure", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  let dir: string;
  beforeAll(async () => {
    h = await startHarness(backend);
    engine = await withEngine(h);
    dir = mkdtempSync(join(tmpdir(), "jobhouse-rerun-"));
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * What a re-run from failed must run again: C, which always fails, and D, which depends on it.
   * A and B completed (a completion that lost a lock race to a failure used to be recorded as the
   * task's own failure: store/errors.ts retryOnConflict and the worker's counts in heartbeats).
   */
  const mustRunAgain = (failed: JobDetail) => {
    const statuses = Object.fromEntries(failed.tasks.map((t) => [t.name, t.status]));
    expect(statuses).toMatchObject({ source: "COMPLETED", left: "COMPLETED", right: "FAILED" });
    return ["C", "D"];
  };
  const executions = (log: string) => readFileSync(log, "utf8").split("\n").filter(Boolean);
  const byName = async (job: JobDetail, name: string) => (await h.http("GET", `/api/v0/tasks/${job.tasks.find((t) => t.name === name)!.id}`)).body as TaskDetail;

  it("re-runs only the failed branch and what depended on it, and ends with the clean run's result", async () => {
    const log = join(dir, "failed.log");
    const gate = join(dir, "gate-1");
    const failed = await runAndWait(h, DIAMOND, { log, gate });
    expect(failed.status).toBe("FAILED");
    expect(executions(log).sort()).toEqual(["A", "B", "C"]);

    writeFileSync(gate, "open");
    const started = (await h.call("run_job", { rerun_of: failed.id })) as { id: string; name: string };
    expect(started.name).toBe("diamond");
    const rerun = await waitForJob(h, started.id);
    expect(rerun.status, rerun.error ?? "").toBe("COMPLETED");
    expect(rerun.rerun_of).toBe(failed.id);
    // Only the failed branch (C) and its dependent (D) ran again.
    expect(executions(log).sort()).toEqual(["A", "B", "C", ...mustRunAgain(failed)].sort());
    const idOf = (name: string) => failed.tasks.find((t) => t.name === name)!.id;
    expect((await byName(rerun, "source")).reused_from).toBe(idOf("source"));
    expect((await byName(rerun, "left")).reused_from).toBe(idOf("left"));
    expect((await byName(rerun, "right")).reused_from).toBeNull();

    const clean = await runAndWait(h, DIAMOND, { log: join(dir, "clean.log"), gate });
    expect(clean.status).toBe("COMPLETED");
    // The job's result is a reference to its joined task, whose result is the number.
    expect((await byName(rerun, "joined")).result_ref).toBe(31);
    expect((await byName(clean, "joined")).result_ref).toBe(31);
  });

  it("runs every task again with from all, and from the CLI", async () => {
    const log = join(dir, "all.log");
    const gate = join(dir, "gate-2");
    const failed = await runAndWait(h, DIAMOND, { log, gate });
    writeFileSync(gate, "open");
    const all = (await h.call("run_job", { rerun_of: failed.id, from: "all" })) as { id: string };
    expect((await waitForJob(h, all.id)).status).toBe("COMPLETED");
    expect(executions(log).sort()).toEqual(["A", "A", "B", "B", "C", "C", "D"]);

    const cli = await h.cli("run-job", "--rerun-of", failed.id, "--json");
    expect(cli.code, cli.err).toBe(0);
    const viaCli = await waitForJob(h, (JSON.parse(cli.out) as { id: string }).id);
    expect(viaCli.status).toBe("COMPLETED");
    // The re-run of the failed run reuses its A and B: only C and D run. (On failure, say why.)
    const explain = async () => {
      const rows = await h.service.db.selectFrom("tasks").select(["job_id", "name", "status", "identity", "reused_from", "attempt", "error"]).where("job_id", "in", [BigInt(failed.id), BigInt(viaCli.id)]).execute();
      return JSON.stringify(rows.map((r) => ({ ...r, job_id: String(r.job_id), reused_from: r.reused_from === null ? null : String(r.reused_from) })));
    };
    const counted = executions(log).sort();
    const expected = ["A", "A", "B", "B", "C", "C", "D", ...mustRunAgain(failed)].sort();
    expect(counted, counted.length === expected.length ? "" : await explain()).toEqual(expected);
    const everything = await h.cli("run-job", "--rerun-of", failed.id, "--all", "--json");
    expect(everything.code, everything.err).toBe(0);
    expect((await waitForJob(h, (JSON.parse(everything.out) as { id: string }).id)).status).toBe("COMPLETED");
    expect(executions(log).filter((l) => l === "A")).toHaveLength(3);
  });

  // Found by trying the product: the reused task's global object had been replaced by another run
  // since, and the re-run went on with that run's data (its result was the other run's, in silence).
  it("runs a task again when the global object its result names was replaced since", async () => {
    const log = join(dir, "published.log");
    const gate = join(dir, "published.gate");
    const failed = await runAndWait(h, "test/fixtures/rerun-jobs.ts:published", { log, v: 1, gate });
    expect(failed.status).toBe("FAILED");
    writeFileSync(gate, "");
    const other = await runAndWait(h, "test/fixtures/rerun-jobs.ts:published", { log: join(dir, "other.log"), v: 2, gate });
    expect(other.status).toBe("COMPLETED");
    expect((await byName(other, "check")).result_ref).toBe(2);
    const rerun = (await h.call("run_job", { rerun_of: failed.id })) as { id: string };
    const done = await waitForJob(h, rerun.id);
    expect(done.status).toBe("COMPLETED");
    expect((await byName(done, "check")).result_ref).toBe(1);
    expect(executions(log)).toEqual(["P", "Q", "P", "Q"]);
    rmSync(gate);
  });

  it("hands a re-run the kwargs its run received: a schema's transform applies once", async () => {
    const first = await runAndWait(h, "test/fixtures/rerun-jobs.ts:doubler", { n: 5 });
    expect(first.result_ref).toBe(10);
    for (const from of ["all", "failed"] as const) {
      const again = (await h.call("run_job", { rerun_of: first.id, from })) as { id: string };
      const rerun = await waitForJob(h, again.id);
      expect(rerun.status).toBe("COMPLETED");
      expect(rerun.kwargs).toEqual({ n: 10 });
      expect(rerun.result_ref, from).toBe(10);
    }
  });

  it("refuses a re-run of a job that is missing or still running, and a run without a name", async () => {
    expect((await h.http("POST", "/api/v0/jobs:run", { rerun_of: "424242" })).status).toBe(404);
    const running = (await h.call("run_job", { name: "test/fixtures/jobs.ts:sleepy", kwargs: { ms: 3000 } })) as { id: string };
    const busy = await h.http("POST", "/api/v0/jobs:run", { rerun_of: running.id });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: "job_not_finished" });
    const nameless = await h.http("POST", "/api/v0/jobs:run", { kwargs: {} });
    expect(nameless.status).toBe(422);
    expect(nameless.body).toMatchObject({ code: "invalid", detail: expect.stringMatching(/^name: required/) });
    // Fields a re-run would not use were dropped in silence: {rerun_of, name} ran the re-run.
    const named = await h.http("POST", "/api/v0/jobs:run", { rerun_of: running.id, name: "test/fixtures/jobs.ts:hello", kwargs: { who: "x" } });
    expect(named.status).toBe(422);
    expect(named.body).toMatchObject({ code: "invalid", detail: expect.stringMatching(/^name, kwargs: a re-run \(rerun_of\)/) });
    const fromAlone = await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/jobs.ts:hello", from: "all" });
    expect(fromAlone.body).toMatchObject({ status: 422, code: "invalid", detail: expect.stringMatching(/^from: only with rerun_of/) });
    // Found by trying the product: "failed" (the default) alone was accepted and ignored.
    const failedAlone = await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/jobs.ts:hello", from: "failed" });
    expect(failedAlone.body).toMatchObject({ status: 422, code: "invalid", detail: expect.stringMatching(/^from: only with rerun_of/) });
  });
});
