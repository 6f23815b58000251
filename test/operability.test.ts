// What an operator watches: GET /ready (both stores answer, else a 503 naming the one that does
// not), GET /metrics for Prometheus, structured logs (SERVICE_LOG_FORMAT=json), and refused
// requests logged by class.

import { type AddressInfo, type Socket, connect, createServer } from "node:net";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { runCli } from "../src/app/cli.js";
import { openService } from "../src/app/context.js";
import { loadConfig } from "../src/core/config.js";
import { toProblem } from "../src/core/errors.js";
import { createObject } from "../src/objects/data-object.js";
import { scopePlane } from "../src/objects/scope-plane.js";
import { createLogger } from "../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";
import { redoclyFindings, spectralFindings } from "./support/openapi-lint.js";
import { createRefusalLog } from "../src/surfaces/rest/refusals.js";

forEachBackend("operability", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  const logged: string[] = [];
  beforeAll(async () => {
    h = await startHarness(backend, {}, { metrics: true, log: createLogger("info", (line) => logged.push(line)) });
    engine = await withEngine(h, 2);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("logs one line per job end: a failure at warn with its task and error", async () => {
    const done = await runAndWait(h, entry("hello"), {});
    const failed = await runAndWait(h, entry("failing"), {});
    expect(logged.filter((line) => line.includes(`job ${done.id} `))).toEqual([expect.stringMatching(new RegExp(`INFO job ${done.id} COMPLETED`))]);
    const failure = logged.filter((line) => line.includes(`job ${failed.id} `));
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatch(new RegExp(`WARNING job ${failed.id} FAILED: task boom \\(\\d+\\) failed: the answer was not 42`));
  });

  it("GET /ready: both stores answered, with how long each took; no token needed", async () => {
    process.env.SERVICE_API_TOKEN = "ready-token";
    try {
      const { status, body } = await h.http("GET", "/ready");
      expect(status).toBe(200);
      expect(body).toEqual({ status: "ready", checks: { sql: { ok: true, ms: expect.any(Number) }, column_store: { ok: true, ms: expect.any(Number) } } });
    } finally {
      delete process.env.SERVICE_API_TOKEN;
    }
  });

  it("GET /ready is a 503 Problem naming the store that does not answer", async ({ skip }) => {
    if (h.config.ch.engine !== "server") return skip("chDB lives in the process: it cannot be away");
    // The same stores, but the column store's address has nobody behind it.
    const broken = await openService(loadConfig({ ...h.env, SERVICE_CH_URL: "http://127.0.0.1:9/nowhere" }), { log: createLogger("error") });
    try {
      const failure = await invoke(operationByName.get("ready")!, {}, { ...broken, principal: SYNTHETIC_ADMIN }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ kind: "unavailable", code: "not_ready" });
      expect((failure as Error).message).toMatch(/^not ready: the column store: /);
    } finally {
      await broken.close();
    }
  });

  // Found by trying the product: /ready said ready with the database dropped (SELECT 1 names none),
  // and every request that needed a store that had gone away was a 500 with a stack in the log.
  it("GET /ready is not ready once the ClickHouse database is gone; a store away is a 503, not a 500", async ({ skip }) => {
    if (h.config.ch.engine !== "server") return skip("chDB lives in the process: it cannot be away");
    const server = new URL(h.config.ch.location);
    const database = `jobhouse_ready_${process.pid}_${Date.now()}`;
    const ch = (query: string) => fetch(`${server.protocol}//${server.host}/`, { method: "POST", body: query });
    expect((await ch(`CREATE DATABASE ${database}`)).ok).toBe(true);
    const service = await openService(loadConfig({ ...h.env, SERVICE_CH_URL: `${server.protocol}//${server.host}/${database}` }), { log: createLogger("error") });
    const readiness = () => invoke(operationByName.get("ready")!, {}, { ...service, principal: SYNTHETIC_ADMIN }).catch((error: unknown) => error);
    try {
      expect(await readiness()).toMatchObject({ status: "ready" });
      expect((await ch(`DROP DATABASE ${database}`)).ok).toBe(true);
      const failure = await readiness();
      expect(failure).toMatchObject({ kind: "unavailable", code: "not_ready" });
      expect((failure as Error).message).toMatch(new RegExp(`the column store: ClickHouse database "${database}" does not exist`));
    } finally {
      await service.close();
      await ch(`DROP DATABASE IF EXISTS ${database}`);
    }
    // A ClickHouse that goes away after the service opened it: reached through a proxy, then closed.
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(Number(server.port), server.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const through = new URL(h.config.ch.location);
    through.port = String((proxy.address() as AddressInfo).port);
    const away = await openService(loadConfig({ ...h.env, SERVICE_CH_URL: through.toString() }), { log: createLogger("error") });
    const columns = await away.columns();
    const probe = await createObject({ x: [1] }, { name: `outage_probe_${Date.now()}`, scope: "global" }, scopePlane({ db: away.db, columns, ids: away.ids, clock: away.clock, jobId: null, taskId: null, attempt: null }));
    const deleteProbe = () => invoke(operationByName.get("delete_object")!, { name: probe.name }, { ...away, principal: SYNTHETIC_ADMIN }).catch((error: unknown) => error);
    try {
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      expect(toProblem(await deleteProbe())).toMatchObject({ status: 503, code: "store_unavailable", detail: expect.stringMatching(/^a store did not answer \((ECONNREFUSED|ECONNRESET|socket hang up)/) });
    } finally {
      await away.close();
      proxy.close();
      await h.http("DELETE", `/api/v0/objects/${probe.name}`);
    }
  });

  it("GET /metrics: jobs and tasks by status, the queue, task durations, requests by route, the process", async () => {
    const job = await runAndWait(h, entry("pipeline"), { n: 1 });
    expect((await h.http("GET", `/api/v0/jobs/${job.id}`)).status).toBe(200);
    const hello = await h.http("POST", "/api/v0/jobs:run", { name: entry("hello") });
    expect(hello.status).toBe(201);
    // The queue reads empty only once that job has run: it was PENDING when CI's machine was slow.
    await waitForJob(h, (hello.body as { id: string }).id);
    const { status, headers, text } = await h.http("GET", "/metrics");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toMatch(/^jobhouse_jobs\{status="COMPLETED"\} [1-9]\d*$/m);
    expect(text).toMatch(/^jobhouse_tasks\{status="COMPLETED"\} [1-9]\d*$/m);
    // A status no task holds is 0, as for jobs, not a series that is missing.
    expect(text).toMatch(/^jobhouse_tasks\{status="CLAIMED"\} 0$/m);
    expect(text).toMatch(/^jobhouse_queue_depth 0$/m);
    expect(text).toMatch(/^jobhouse_queue_oldest_wait_seconds 0$/m);
    expect(text).toMatch(/^jobhouse_task_duration_seconds_count\{status="COMPLETED"\} [1-9]\d*$/m);
    expect(text).toMatch(/^jobhouse_job_transitions_total\{status="COMPLETED"\} [1-9]\d*$/m);
    // Routes by their pattern: an id in the path is not a series of its own.
    expect(text).toMatch(/^jobhouse_http_request_duration_seconds_count\{method="GET",route="\/api\/v0\/jobs\/:ref",status="200"\} [1-9]\d*$/m);
    // As the API documents the route: the router writes its colon doubled (jobs::run).
    expect(text).toMatch(/^jobhouse_http_request_duration_seconds_count\{method="POST",route="\/api\/v0\/jobs:run",status="201"\} 1$/m);
    expect(text).not.toContain(job.id);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it("the OpenAPI document of a server that serves /metrics describes it, and still lints clean", async () => {
    const doc = (await h.http("GET", "/api/v0/openapi.json")).body as { paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>> };
    const metrics = doc.paths["/metrics"]?.get;
    expect(metrics?.security).toEqual([]);
    expect(metrics?.responses["200"]).toMatchObject({ content: { "text/plain": {} } });
    expect(await redoclyFindings(doc)).toEqual([]);
    expect(await spectralFindings(doc)).toEqual([]);
  });
});

it("SERVICE_LOG_FORMAT=json writes one object per line; anything else is refused", () => {
  const lines: string[] = [];
  const log = createLogger("info", (line) => lines.push(line), loadConfig({ SERVICE_LOG_FORMAT: "json" }).logFormat);
  log.warn("job 7 FAILED", { job_id: 7n, task: "boom" });
  log.debug("not at info");
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toEqual({ time: expect.stringMatching(/^\d{4}-/), level: "warn", msg: "job 7 FAILED", job_id: "7", task: "boom" });
  expect(() => loadConfig({ SERVICE_LOG_FORMAT: "xml" })).toThrow(/SERVICE_LOG_FORMAT must be text or json/);
});

// Found by trying the product: a process's refusal to start was a plain line among JSON records.
it("under SERVICE_LOG_FORMAT=json a process's refusal to start is a JSON record; a command's error stays a line", async () => {
  const refusal = async (argv: string[], env: Record<string, string>) => {
    const err: string[] = [];
    const code = await runCli(argv, { env: { SERVICE_LOG_FORMAT: "json", ...env }, streams: { out: () => undefined, err: (t) => err.push(t) } });
    return { code, err: err.join("\n") };
  };
  const unreachable = { SERVICE_SQL_URL: "postgres://postgres@127.0.0.1:1/nowhere", SERVICE_CH_URL: "http://127.0.0.1:1/nowhere" };
  const worker = await refusal(["worker", "start"], unreachable);
  expect(worker.code).toBe(10);
  expect(JSON.parse(worker.err)).toEqual({ time: expect.stringMatching(/^\d{4}-/), level: "error", msg: expect.stringMatching(/^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere cannot be reached/) });
  // A variable that is wrong is refused before the configuration exists: the format is still heard.
  const background = await refusal(["background", "start"], { SERVICE_AUTH: "bogus" });
  expect(background.code).toBe(2);
  expect(JSON.parse(background.err)).toMatchObject({ level: "error", msg: 'SERVICE_AUTH must be "token" or "users", got "bogus"' });
  expect((await refusal(["job", "list"], { SERVICE_AUTH: "bogus" })).err).toBe('error: SERVICE_AUTH must be "token" or "users", got "bogus"');
  // Under the default text format too, as docs/OPERATIONS.md says: "<time> ERROR <message>".
  const text = await refusal(["worker", "start"], { ...unreachable, SERVICE_LOG_FORMAT: "text" });
  expect(text.code).toBe(10);
  expect(text.err).toMatch(/^\d{4}-\d\d-\d\dT\S+ ERROR PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere cannot be reached: ECONNREFUSED \(sql_unreachable\)$/);
});

it("logs one line per class of refused request a minute, then how many more came", () => {
  vi.useFakeTimers();
  try {
    const lines: string[] = [];
    const refusals = createRefusalLog(createLogger("info", (line) => lines.push(line)));
    for (let i = 0; i < 50; i++) refusals.note(401, "unauthorized", "GET", "/api/v0/jobs");
    refusals.note(422, "invalid", "POST", "/api/v0/jobs:run");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/WARNING refused GET \/api\/v0\/jobs: 401 unauthorized/);
    expect(lines[1]).toMatch(/INFO refused POST \/api\/v0\/jobs:run: 422 invalid/);
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/WARNING refused 49 more request\(s\) with 401 unauthorized in the last minute/);
    refusals.note(401, "unauthorized", "GET", "/api/v0/jobs");
    expect(lines).toHaveLength(4);
    refusals.close();
  } finally {
    vi.useRealTimers();
  }
});
