// OpenLineage RunEvents out (issue 13 item 3), on both backends: every job run and task attempt
// sends START then COMPLETE, FAIL or ABORT to SERVICE_OPENLINEAGE_URL (and the same lines to
// SERVICE_OPENLINEAGE_FILE), valid against the spec's shapes; a failing or hanging receiver never
// holds a job back, and what it lost is counted.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openService } from "../src/app/context.js";
import { startEngine } from "../src/app/engine-runtime.js";
import { ConfigError, loadConfig } from "../src/core/config.js";
import { type Logger, silentLogger } from "../src/core/log.js";
import type { JobDetail } from "../src/models/jobs.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { jobRunId, taskRunId } from "../src/engine/openlineage/run-ids.js";
import type { RunEvent } from "../src/engine/openlineage/facets.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, waitFor, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";
import { runEventErrors } from "./support/openlineage-schema.js";

const JOBS = "test/fixtures/openlineage-jobs.ts";
const FIXTURES = "test/fixtures/jobs.ts";
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Receiver {
  url: string;
  events: RunEvent[];
  authorizations: (string | undefined)[];
  close(): void;
}

/** A loopback receiver: "ok" answers 204, "error" 500 (and counts), "hang" never answers. */
async function startReceiver(mode: "ok" | "error" | "hang"): Promise<Receiver> {
  const events: RunEvent[] = [];
  const authorizations: (string | undefined)[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk));
    req.on("end", () => {
      events.push(JSON.parse(text) as RunEvent);
      authorizations.push(req.headers.authorization);
      if (mode === "hang") return;
      res.statusCode = mode === "ok" ? 204 : 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/lineage`,
    events,
    authorizations,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const ofRun = (events: RunEvent[], runId: string) => events.filter((e) => e.run.runId === runId);
const types = (events: RunEvent[], runId: string) => ofRun(events, runId).map((e) => e.eventType);

/** Runs the fixture's hello job on an engine of its own, which stops after: the job must complete. */
async function runHelloToCompletion(h: Harness): Promise<void> {
  const engine = await withEngine(h);
  try {
    expect((await runAndWait(h, `${FIXTURES}:hello`)).status).toBe("COMPLETED");
  } finally {
    await engine.stop();
  }
}

forEachBackend("OpenLineage events", (backend) => {
  let ok: Receiver;
  let failing: Receiver;
  let hanging: Receiver;
  let dir: string;
  let csv: string;

  beforeAll(async () => {
    [ok, failing, hanging] = await Promise.all([startReceiver("ok"), startReceiver("error"), startReceiver("hang")]);
    dir = mkdtempSync(join(tmpdir(), "jobhouse-openlineage-"));
    csv = join(dir, "people.csv");
    writeFileSync(csv, "name,age\nann,30\nbob,12\ncid,45\n");
  });
  afterAll(() => {
    for (const r of [ok, failing, hanging]) r?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends START then COMPLETE for the job run and each attempt, with parent, datasets, schema, column lineage and SQL; the file gets the same lines; the token rides along", async () => {
    const file = join(dir, `events-${backend.name}.jsonl`);
    const h = await startHarness(backend, { SERVICE_OPENLINEAGE_URL: ok.url, SERVICE_OPENLINEAGE_TOKEN: "s3cret", SERVICE_OPENLINEAGE_FILE: file, SERVICE_OPENLINEAGE_NAMESPACE: "etl" });
    const from = ok.events.length;
    let job: JobDetail;
    let appended: JobDetail;
    try {
      const engine = await withEngine(h);
      try {
        job = await runAndWait(h, `${JOBS}:peopleJob`, { path: csv });
        appended = await runAndWait(h, `${JOBS}:appendJob`, { path: csv });
      } finally {
        await engine.stop();
      }
      expect(job.status).toBe("COMPLETED");
      expect(appended.status).toBe("COMPLETED");
      await waitFor("the job runs' COMPLETE", async () => [job, appended].every((j) => types(ok.events, jobRunId(BigInt(j.id))).includes("COMPLETE")));
    } finally {
      await h.close();
    }
    const events = ok.events.slice(from);
    for (const event of events) expect(runEventErrors(event), JSON.stringify(event)).toEqual([]);
    expect(ok.authorizations.slice(from).every((a) => a === "Bearer s3cret")).toBe(true);

    // The job run: START then COMPLETE, named after the job, in the configured namespace.
    const jobRun = jobRunId(BigInt(job.id));
    expect(types(events, jobRun)).toEqual(["START", "COMPLETE"]);
    expect(ofRun(events, jobRun)[0]!.job).toMatchObject({ namespace: "etl", name: "people" });
    // Each attempt: its own run, START before COMPLETE, with the job run as parent.
    for (const task of job.tasks) {
      const runId = taskRunId(BigInt(task.id), 1);
      expect(runId).toMatch(UUID_V5);
      expect(types(events, runId)).toEqual(["START", "COMPLETE"]);
      for (const event of ofRun(events, runId)) {
        expect(event.job).toMatchObject({ namespace: "etl", name: `people.${task.name}` });
        expect(event.run.facets.parent).toMatchObject({ run: { runId: jobRun }, job: { namespace: "etl", name: "people" } });
      }
    }
    expect(events.findIndex((e) => e.run.runId === jobRun && e.eventType === "START")).toBeLessThan(events.findIndex((e) => e.run.runId !== jobRun));

    const loader = job.tasks.find((t) => t.name === "load_and_derive")!;
    const complete = ofRun(events, taskRunId(BigInt(loader.id), 1)).find((e) => e.eventType === "COMPLETE")!;
    expect(complete.inputs).toEqual([{ namespace: "file", name: csv, facets: {} }]);
    expect(complete.job.facets.sql).toMatchObject({ query: expect.stringContaining("people_next_year") });
    expect(String(complete.job.facets.sql!.query)).toContain(";\n");
    const derived = complete.outputs.find((o) => o.name.endsWith("people_next_year"))!;
    const database = h.config.ch.database;
    expect(derived.namespace).toBe(backend.name === "local" ? "clickhouse://localhost" : `clickhouse://${new URL(h.config.ch.location).host}`);
    expect(derived.name).toMatch(new RegExp(`^${database}\\.`));
    expect((derived.facets.schema!.fields as { name: string }[]).map((f) => f.name)).toEqual(["name", "age_next_year"]);
    // Column lineage runs through the loaded temp (made and read by the same attempt) to the file.
    expect(derived.facets.columnLineage!.fields).toEqual({
      name: { inputFields: [{ namespace: "file", name: csv, field: "name" }] },
      age_next_year: { inputFields: [{ namespace: "file", name: csv, field: "age" }] },
    });

    // Found by trying the product: rows appended to an object another run made carried that run's
    // column edges, naming datasets by bare object ids. Literal rows come from no input.
    const append = appended!.tasks.find((t) => t.name === "append_person")!;
    const appendEvent = ofRun(events, taskRunId(BigInt(append.id), 1)).find((e) => e.eventType === "COMPLETE")!;
    expect(appendEvent.inputs).toEqual([]);
    expect(appendEvent.outputs.map((o) => o.name)).toEqual([`${database}.p_people_all`]);
    expect(JSON.stringify(appendEvent)).not.toMatch(/"name":"[^"]*\.\d+"/);
    expect(appendEvent.outputs[0]!.facets.columnLineage).toBeUndefined();

    // The file has the same events, in the same order, one JSON object a line.
    const lines = readFileSync(file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as RunEvent);
    expect(lines).toEqual(events);
  });

  it("sends FAIL with the task's error (a retry's attempt too), and ABORT for a cancelled job and its running attempt", async () => {
    const h = await startHarness(backend, { SERVICE_OPENLINEAGE_URL: ok.url });
    try {
      const engine = await withEngine(h);
      try {
        const failed = await runAndWait(h, `${FIXTURES}:failing`);
        expect(failed.status).toBe("FAILED");
        const boom = failed.tasks.find((t) => t.name === "boom")!;
        const failRun = taskRunId(BigInt(boom.id), 1);
        await waitFor("the failed job's FAIL", async () => types(ok.events, jobRunId(BigInt(failed.id))).includes("FAIL"));
        expect(types(ok.events, failRun)).toEqual(["START", "FAIL"]);
        const fail = ofRun(ok.events, failRun)[1]!;
        expect(fail.run.facets.errorMessage).toMatchObject({ message: expect.stringContaining("the answer was not 42"), programmingLanguage: "TypeScript" });
        const jobFail = ofRun(ok.events, jobRunId(BigInt(failed.id))).find((e) => e.eventType === "FAIL")!;
        expect(jobFail.run.facets.errorMessage).toMatchObject({ message: expect.stringContaining("the answer was not 42") });

        // A retry: attempt 1 ends in FAIL (published as PENDING on attempt 2), attempt 2 is its own run.
        const retried = await runAndWait(h, `${FIXTURES}:flaky`, { failures: 1 });
        expect(retried.status).toBe("COMPLETED");
        // The job and its task are both called flaky: the task is the one that took two attempts.
        const flaky = retried.tasks.find((t) => t.name === "flaky" && t.attempt === 2)!;
        await waitFor("the retried job's COMPLETE", async () => types(ok.events, jobRunId(BigInt(retried.id))).includes("COMPLETE"));
        expect(types(ok.events, taskRunId(BigInt(flaky.id), 1))).toEqual(["START", "FAIL"]);
        expect(ofRun(ok.events, taskRunId(BigInt(flaky.id), 1))[1]!.run.facets.errorMessage).toMatchObject({ message: expect.stringContaining("flaky failure on attempt 1") });
        expect(types(ok.events, taskRunId(BigInt(flaky.id), 2))).toEqual(["START", "COMPLETE"]);

        const { id } = (await h.call("run_job", { name: `${FIXTURES}:sleepy`, kwargs: { ms: 60_000 } })) as { id: string };
        const sleeper = await waitFor("the sleeper to run", async () => ((await h.call("get_job", { ref: id })) as JobDetail).tasks.find((t) => t.name === "sleeper" && t.status === "RUNNING"));
        await h.call("cancel_job", { ref: id });
        expect((await waitForJob(h, id)).status).toBe("CANCELLED");
        await waitFor("the job run's ABORT", async () => types(ok.events, jobRunId(BigInt(id))).includes("ABORT"));
        expect(types(ok.events, jobRunId(BigInt(id)))).toEqual(["START", "ABORT"]);
        expect(types(ok.events, taskRunId(BigInt(sleeper.id), 1))).toEqual(["START", "ABORT"]);
        const abort = ofRun(ok.events, taskRunId(BigInt(sleeper.id), 1))[1]!;
        expect(abort.run.facets.parent).toMatchObject({ run: { runId: jobRunId(BigInt(id)) } });
      } finally {
        await engine.stop();
      }
      // Found by trying the product: a job cancelled before it started got an ABORT with no START.
      const pending = (await h.call("run_job", { name: `${FIXTURES}:hello` })) as { id: string };
      await h.call("cancel_job", { ref: pending.id });
      const again = await withEngine(h);
      try {
        // Published after the cancel: once its COMPLETE is out, an ABORT of the cancel would be too.
        const later = await runAndWait(h, `${FIXTURES}:hello`);
        await waitFor("the later job's COMPLETE", async () => types(ok.events, jobRunId(BigInt(later.id))).includes("COMPLETE"));
        expect(types(ok.events, jobRunId(BigInt(pending.id)))).toEqual([]);
      } finally {
        await again.stop();
      }
    } finally {
      await h.close();
    }
    for (const event of ok.events) expect(runEventErrors(event), JSON.stringify(event)).toEqual([]);
  });

  it("a receiver answering 500 holds no job back: the events are retried, then counted as failed on /metrics", async () => {
    const h = await startHarness(backend, { SERVICE_OPENLINEAGE_URL: failing.url }, { metrics: true });
    try {
      await runHelloToCompletion(h);
      await waitFor("an event to be given up", async () => h.service.openLineage!.counts().failed > 0);
      const metrics = await h.http("GET", "/metrics");
      expect(metrics.text).toMatch(/jobhouse_openlineage_events_total\{result="failed"\} [1-9]/);
      expect(metrics.text).toMatch(/jobhouse_openlineage_events_total\{result="sent"\} 0/);
      // Each was tried more than once before it was given up.
      expect(failing.events.length).toBeGreaterThan(h.service.openLineage!.counts().failed);
    } finally {
      await h.close();
    }
  });

  it("a receiver that never answers holds no job back: shutdown flushes for a bounded time, then counts and logs what it dropped", async () => {
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const h = await startHarness(backend, { SERVICE_OPENLINEAGE_URL: hanging.url }, { log });
    let counts: { sent: number; dropped: number; failed: number };
    try {
      await runHelloToCompletion(h);
      await waitFor("the first event to reach the receiver", async () => hanging.events.length > 0);
    } finally {
      await h.close();
      counts = h.service.openLineage!.counts();
    }
    expect(counts.sent).toBe(0);
    expect(counts.dropped).toBeGreaterThan(0);
    expect(warnings.some((w) => /^openlineage: events not delivered: \d+ dropped at .* \(shutting down\)/.test(w))).toBe(true);
  });

  if (backend.name === "distributed") {
    it("reports only what its own process published, not the changes other processes send it over NOTIFY", async () => {
      const h = await startHarness(backend, { SERVICE_OPENLINEAGE_URL: ok.url }, { longRunning: true });
      // Another process on the same stores, with no emitter of its own, runs a job.
      const other = await openService(loadConfig({ ...h.env, SERVICE_OPENLINEAGE_URL: "" }), { log: silentLogger });
      try {
        const heard: string[] = [];
        const unsubscribe = h.service.changes.subscribe(({ change }) => void (change.type === "job" && heard.push(`${change.id} ${change.status}`)));
        const engine = await startEngine(other, { concurrency: 2, background: false });
        let id: string;
        try {
          ({ id } = (await invoke(operationByName.get("run_job")!, { name: `${FIXTURES}:hello`, kwargs: {} }, { ...other, principal: SYNTHETIC_ADMIN })) as { id: string });
          expect((await waitForJob(h, id)).status).toBe("COMPLETED");
          await waitFor("the other process's COMPLETED to be heard", async () => heard.includes(`${id} COMPLETED`));
        } finally {
          await engine.stop();
          unsubscribe();
        }
        // Its own job, run after: once its events arrive, anything about the other one would have too.
        const engineHere = await withEngine(h);
        try {
          const mine = await runAndWait(h, `${FIXTURES}:hello`);
          await waitFor("this process's own events", async () => types(ok.events, jobRunId(BigInt(mine.id))).includes("COMPLETE"));
        } finally {
          await engineHere.stop();
        }
        expect(ofRun(ok.events, jobRunId(BigInt(id)))).toEqual([]);
      } finally {
        await other.close();
        await h.close();
      }
    });
  }
});

describe("OpenLineage configuration", () => {
  it("is off unless a URL or a file is set, and refuses a URL that is not http(s) in one line", () => {
    expect(loadConfig({ SERVICE_HOME: "/srv/jh" }).openLineage).toBeNull();
    expect(loadConfig({ SERVICE_HOME: "/srv/jh", SERVICE_OPENLINEAGE_URL: "http://marquez:5000/api/v1/lineage" }).openLineage).toEqual({
      url: "http://marquez:5000/api/v1/lineage",
      token: null,
      file: null,
      namespace: "jobhouse",
    });
    expect(loadConfig({ SERVICE_HOME: "/srv/jh", SERVICE_OPENLINEAGE_FILE: "/var/log/ol.jsonl", SERVICE_OPENLINEAGE_NAMESPACE: "prod" }).openLineage).toMatchObject({ file: "/var/log/ol.jsonl", namespace: "prod" });
    for (const bad of ["marquez:5000/api", "ftp://marquez/api", "not a url"]) {
      expect(() => loadConfig({ SERVICE_HOME: "/srv/jh", SERVICE_OPENLINEAGE_URL: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SERVICE_HOME: "/srv/jh", SERVICE_OPENLINEAGE_URL: bad })).toThrow(/^SERVICE_OPENLINEAGE_URL must be an http\(s\) URL, got "[^\n]*"$/);
    }
  });
});
