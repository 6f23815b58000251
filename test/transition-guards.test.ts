// The guarded transitions themselves, below the engine: a report with a stale key (another worker,
// an old attempt) or after the task moved on changes nothing, and of two reports racing for one
// attempt exactly one wins. Engine-level "late result" tests cannot show this: the worker abandons
// an attempt before its late result would reach the store.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../src/engine/start-run.js";
import { claimReadyTasks, completeTaskAndClaim } from "../src/store/claims.js";
import { type AttemptKey, completeTask, failAttempt } from "../src/store/transitions.js";
import { insertWorker } from "../src/store/workers.js";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("guarded transitions", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  const now = () => h.service.clock.now();
  const addWorker = async () => {
    const id = h.service.ids.next();
    await insertWorker(h.service.db, { id, hostname: "test", pid: 1, concurrency: 1, maxTasks: null, nowMs: now() });
    return id;
  };
  const taskRow = (id: bigint) => h.service.db.selectFrom("tasks").select(["status", "attempt", "worker_id", "result_ref", "error"]).where("id", "=", id).executeTakeFirstOrThrow();

  /** A fresh job whose entry task is RUNNING on a new worker: its attempt key. */
  async function runningTask(): Promise<AttemptKey> {
    const { db, ids, clock, config } = h.service;
    await startRun(db, ids, clock, config, { name: "guarded", entrypoint: "test/fixtures/jobs.ts:hello", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null, options: { retries: 3 } });
    const workerId = await addWorker();
    const [task] = (await claimReadyTasks(db, { workerId, limit: 1, nowMs: now(), logDir: "/tmp/jobhouse-test-logs" })).tasks;
    const key = { taskId: task!.id, workerId, attempt: Number(task!.attempt) };
    return key;
  }
  const completion = (key: AttemptKey, result: string) => ({ key, resultJson: result, children: [], resultReferences: [], nowMs: now() });
  const failure = (key: AttemptKey, retry: boolean) => ({ key, error: "boom", retryAtMs: retry ? now() + 60_000 : null, nowMs: now() });

  // A job's worker marks it ended at its next claim (or within 20 ms): a cancel in between made a
  // job whose every task COMPLETED end CANCELLED, its result dropped (9 times in 14 over REST).
  it("a cancel of a job whose tasks have all ended ends it as they did, and answers 409", async () => {
    const key = await runningTask();
    const { db } = h.service;
    expect((await completeTask(db, completion(key, '"done"'))).completed).toBe(true);
    const jobId = (await db.selectFrom("tasks").select("job_id").where("id", "=", key.taskId).executeTakeFirstOrThrow()).job_id;
    expect((await db.selectFrom("jobs").select("status").where("id", "=", jobId).executeTakeFirstOrThrow()).status).toBe("RUNNING");
    const cancel = await h.http("POST", `/api/v0/jobs/${jobId}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body).toMatchObject({ code: "job_terminal", detail: `job ${jobId} is already COMPLETED` });
    expect(await h.call("get_job", { ref: String(jobId) })).toMatchObject({ status: "COMPLETED", result_ref: "done", error: null });
  });

  describe("stale keys change nothing", () => {
    it("another worker's report", async () => {
      const key = await runningTask();
      const stranger = { ...key, workerId: await addWorker() };
      expect((await completeTask(h.service.db, completion(stranger, '"stolen"'))).completed).toBe(false);
      expect((await failAttempt(h.service.db, failure(stranger, true))).failed).toBe(false);
      const row = await taskRow(key.taskId);
      expect(row).toMatchObject({ status: "RUNNING", result_ref: null, error: null });
      expect(Number(row.attempt)).toBe(1);
      expect(row.worker_id).toBe(key.workerId);
    });

    it("an old attempt's report while the same worker runs the next attempt", async () => {
      const key = await runningTask();
      const { db } = h.service;
      expect((await failAttempt(db, { ...failure(key, true), retryAtMs: now() - 1 })).failed).toBe(true);
      // The same worker takes attempt 2: only the attempt number tells the two reports apart.
      const [again] = (await claimReadyTasks(db, { workerId: key.workerId, limit: 10, nowMs: now(), logDir: "/tmp/jobhouse-test-logs" })).tasks.filter((t) => t.id === key.taskId);
      const second = { ...key, attempt: Number(again!.attempt) };
      expect(second.attempt).toBe(2);
      expect((await completeTask(db, completion(key, '"late"'))).completed).toBe(false);
      expect((await failAttempt(db, failure(key, false))).failed).toBe(false);
      expect(await taskRow(key.taskId)).toMatchObject({ status: "RUNNING", result_ref: null });
      expect((await completeTask(db, completion(second, '"on time"'))).completed).toBe(true);
      expect(await taskRow(key.taskId)).toMatchObject({ status: "COMPLETED", result_ref: '"on time"' });
    });

    it("any report after the attempt ended", async () => {
      const key = await runningTask();
      expect((await completeTask(h.service.db, completion(key, '"first"'))).completed).toBe(true);
      expect((await completeTask(h.service.db, completion(key, '"second"'))).completed).toBe(false);
      expect((await failAttempt(h.service.db, failure(key, false))).failed).toBe(false);
      expect(await taskRow(key.taskId)).toMatchObject({ status: "COMPLETED", result_ref: '"first"' });
    });
  });

  describe("races", () => {
    it("of a completion and a failure of one attempt, exactly one wins", async () => {
      for (let round = 0; round < 5; round++) {
        const key = await runningTask();
        const [done, failed] = await Promise.all([completeTask(h.service.db, completion(key, '"done"')), failAttempt(h.service.db, failure(key, false))]);
        expect([done.completed, failed.failed].filter(Boolean)).toHaveLength(1);
        expect((await taskRow(key.taskId)).status).toBe(done.completed ? "COMPLETED" : "FAILED");
      }
    });

    it("of two completions of one attempt, exactly one wins", async () => {
      const key = await runningTask();
      const outcomes = await Promise.all([1, 2, 3].map((n) => completeTask(h.service.db, completion(key, `"${n}"`))));
      expect(outcomes.filter((o) => o.completed)).toHaveLength(1);
    });

    it("a failure never waits on its worker's row, which a claim holds FOR SHARE", async () => {
      // Seen under load as a task whose code succeeded ending FAILED: the failure of one branch of
      // a diamond locked the join (skipping it), then waited on the worker's row to count itself,
      // while the same worker's completion-and-claim of the other branch held that row FOR SHARE
      // and waited on the join. PostgreSQL broke the deadlock by failing the completion.
      if (backend.name === "local") return;
      const { db } = h.service;
      const key = await runningTask();
      const held = db.transaction().execute(async (tx) => {
        await tx.selectFrom("workers").select("id").where("id", "=", key.workerId).forShare().execute();
        const failing = failAttempt(db, failure(key, false)).then((f) => f.failed);
        const blocked = new Promise<string>((resolve) => setTimeout(() => resolve("still waiting"), 5_000));
        return Promise.race([failing, blocked]);
      });
      expect(await held).toBe(true);
      expect((await taskRow(key.taskId)).status).toBe("FAILED");
    });

    it("of several workers claiming one ready task, exactly one takes it", async () => {
      const { db, ids, clock, config } = h.service;
      const job = await startRun(db, ids, clock, config, { name: "contested", entrypoint: "test/fixtures/jobs.ts:hello", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
      const workers = await Promise.all([1, 2, 3, 4].map(() => addWorker()));
      const claims = await Promise.all(workers.map((w) => claimReadyTasks(db, { workerId: w, limit: 10, nowMs: now(), logDir: "/tmp/jobhouse-test-logs" })));
      const taken = claims.flatMap((c) => c.tasks).filter((t) => t.job_id === job.id);
      expect(taken).toHaveLength(1);
    });
  });

  describe("a completion that claims its slot's next task", () => {
    const startHello = () => {
      const { db, ids, clock, config } = h.service;
      return startRun(db, ids, clock, config, { name: "slot", entrypoint: "test/fixtures/jobs.ts:hello", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
    };
    const request = (workerId: bigint, candidates: bigint[] = []) => ({ workerId, limit: 1, nowMs: now(), logDir: "/tmp/jobhouse-test-logs", settledCandidates: candidates });

    it("completes the task and, on PostgreSQL, takes the next ready one in the same statement", async () => {
      const key = await runningTask();
      const job = await startHello();
      const earlier = await startHello();
      const { db } = h.service;
      const outcome = await completeTaskAndClaim(db, completion(key, '"done"'), request(key.workerId, [earlier.id]));
      expect(outcome.completed).toBe(true);
      expect(await taskRow(key.taskId)).toMatchObject({ status: "COMPLETED", result_ref: '"done"' });
      if (backend.name === "local") {
        // One writer: nothing to gain by folding the claim in; the worker claims as usual.
        expect(outcome.claim).toBeUndefined();
        return;
      }
      expect(outcome.claim?.workerStatus).toBe("ACTIVE");
      const [next] = outcome.claim!.tasks;
      expect(outcome.claim!.tasks).toHaveLength(1);
      expect(await taskRow(next!.id)).toMatchObject({ status: "RUNNING", worker_id: key.workerId });
      // The job whose entry task it took is RUNNING, and was reported as started.
      if (next!.job_id === job.id || next!.job_id === earlier.id) expect(outcome.claim!.startedJobs).toContain(next!.job_id);
      // A candidate job with an open task is not settled.
      expect(outcome.claim!.settledJobs).toEqual([]);
    });

    it("takes nothing for a worker that is no longer ACTIVE, and says so", async () => {
      if (backend.name === "local") return;
      const key = await runningTask();
      await startHello();
      const { db } = h.service;
      await db.updateTable("workers").set({ status: "STOPPING" }).where("id", "=", key.workerId).execute();
      const outcome = await completeTaskAndClaim(db, completion(key, '"done"'), request(key.workerId));
      expect(outcome.completed).toBe(true);
      expect(outcome.claim).toMatchObject({ tasks: [], workerStatus: "STOPPING" });
    });
  });
});
