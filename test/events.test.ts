// GET /api/v0/events (CONTRACT §10) on both backends: a job's whole life in order, narrowing by
// job, a task's log lines, Last-Event-ID, authentication, a slow client cut off without harm to
// others, and (on PostgreSQL) a listener connection that is reset.

import { createConnection } from "node:net";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { createSharedChangeFeed } from "../src/engine/changes.js";
import { followTaskLog } from "../src/engine/log-follower.js";
import type { JobDetail } from "../src/models/jobs.js";
import { openStore } from "../src/store/db.js";
import { openNotifyChannel } from "../src/store/notify.js";
import { forEachBackend, pgSchemaOf } from "./support/backends.js";
import { entry, runAndWait, waitFor, waitForJob, waitForTask, withEngine } from "./support/engine.js";
import { type EventClient, jobStatusesIn, openEventStream, taskStatusesIn } from "./support/event-client.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("the event stream", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  let base = "";
  const clients: EventClient[] = [];
  const open = async (query = "", headers: Record<string, string> = {}) => {
    const client = await openEventStream(`${base}/api/v0/events${query}`, headers);
    clients.push(client);
    return client;
  };
  const original = process.env.SERVICE_API_TOKEN;

  beforeAll(async () => {
    // A small buffer bound, so the slow client below is cut off after little output.
    h = await startHarness(backend, {}, { longRunning: true, eventLimits: { keepAliveMs: 200, maxBufferedBytes: 64 * 1024, logPollMs: 50 } });
    engine = await withEngine(h, 2);
    base = await h.listen();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    if (original === undefined) delete process.env.SERVICE_API_TOKEN;
    else process.env.SERVICE_API_TOKEN = original;
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("carries a job's whole life in order, each task's too, and comments that keep it alive", async () => {
    const stream = await open();
    expect(stream.status).toBe(200);
    const job = await runAndWait(h, entry("pipeline"), { n: 2 });
    await stream.next("the job's end", (e) => e.type === "job.updated" && e.data.id === job.id && e.data.status === "COMPLETED");
    expect(jobStatusesIn(stream.events, job.id)).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
    expect(stream.events.find((e) => e.type === "job.updated" && e.data.id === job.id)?.data).toMatchObject({ name: "pipeline" });
    for (const task of job.tasks) expect(taskStatusesIn(stream.events, task.id), task.name).toEqual(["RUNNING@1", "COMPLETED@1"]);
    // Ids grow, and the job's end is its last event.
    const ofJob = stream.events.filter((e) => (e.type === "job.updated" ? e.data.id : e.type === "task.updated" ? e.data.job_id : null) === job.id);
    const numbers = ofJob.map((e) => Number(e.id!.split("-")[1]));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(ofJob.at(-1)).toMatchObject({ type: "job.updated", data: { status: "COMPLETED" } });
    await waitFor("a keep-alive comment", async () => stream.text().includes(": keep-alive\n\n"));
  });

  // A final failure skips its dependents in bulk; each skipped task ended, so each has its event
  // (before, a task view of one waited for the job's end or the 2 s poll).
  it("sends task.updated SKIPPED for each dependent a failure skipped", async () => {
    const stream = await open();
    const job = await runAndWait(h, entry("failing"));
    expect(job.status).toBe("FAILED");
    await stream.next("the job's end", (e) => e.type === "job.updated" && e.data.id === job.id && e.data.status === "FAILED");
    const skipped = job.tasks.filter((t) => t.status === "SKIPPED");
    expect(skipped).toHaveLength(2);
    for (const task of skipped) expect(taskStatusesIn(stream.events, task.id), task.name).toEqual(["SKIPPED@1"]);
    const failed = job.tasks.find((t) => t.status === "FAILED")!;
    expect(taskStatusesIn(stream.events, failed.id)).toEqual(["RUNNING@1", "FAILED@1"]);
  });

  it("narrows to one job with ?job_id=, and refuses bad filters as Problems", async () => {
    // A job that lasts long enough to be narrowed to before it ends.
    await open();
    const mark = h.service.events.lastId;
    const first = (await h.call("run_job", { name: entry("talkerJob"), kwargs: { lines: 1, everyMs: 0, waitMs: 300 } })) as { id: string };
    // Replayed from before the run: on a slow machine the job may end before its stream opens.
    const narrowed = await open(`?job_id=${first.id}`, { "last-event-id": mark });
    const other = await runAndWait(h, entry("hello"), { who: "other" });
    await waitForJob(h, first.id);
    await narrowed.next("the first job's end", (e) => e.type === "job.updated" && e.data.id === first.id && e.data.status === "COMPLETED");
    expect(narrowed.events.some((e) => (e.type === "job.updated" && e.data.id === other.id) || (e.type === "task.updated" && e.data.job_id === other.id))).toBe(false);

    // 2^63 has 19 digits but is past BIGINT: refused, never bound to a query (it was a 500).
    for (const query of ["?job_id=abc", "?job_id=1&job_id=2", "?colour=red", "?task_id=9223372036854775808", "?job_id=9223372036854775808"]) {
      const bad = await h.http("GET", `/api/v0/events${query}`);
      expect(bad.status, query).toBe(422);
      expect(bad.body).toMatchObject({ code: "invalid" });
    }
    // Found by trying the product: a repeated job_id was said not to be an id.
    expect((await h.http("GET", "/api/v0/events?job_id=1&job_id=2")).body).toMatchObject({ detail: "job_id is given 2 times: the stream follows one job (or every job, without it)" });
    expect((await h.http("GET", "/api/v0/events?task_id=999999999")).body).toMatchObject({ status: 404, code: "not_found" });
    // An unknown job too (its stream was a 200 that would stay silent for ever).
    expect((await h.http("GET", "/api/v0/events?job_id=999999999")).body).toMatchObject({ status: 404, code: "not_found" });
    const jobTask = (await h.call("get_job", { ref: first.id })) as JobDetail;
    const mismatch = await h.http("GET", `/api/v0/events?task_id=${jobTask.tasks[0]!.id}&job_id=${other.id}`);
    expect(mismatch.status).toBe(422);
  });

  it("answers HEAD with the stream's headers and ends it, rather than holding the request open", async () => {
    // Node sends a HEAD response's headers only when it ends: an opened stream never answered.
    const head = await fetch(`${base}/api/v0/events`, { method: "HEAD", signal: AbortSignal.timeout(5_000) });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^text\/event-stream/);
  });

  // Found by trying the product: a line longer than one read was cut inside a character, and a
  // log's last 1 MiB began inside one, so the pieces and the REST tail held U+FFFD.
  it("cuts a log of wide characters only between characters, in the stream's pieces and the REST tail", async () => {
    const job = await runAndWait(h, entry("talkerJob"), { lines: 3, everyMs: 0, width: 150_000, char: "日" });
    const task = job.tasks.find((t) => t.name === "talker")!;
    const follower = (await followTaskLog(h.service.db, h.service.config.logDir, BigInt(task.id)))!;
    const pieces = [];
    for (let piece = await follower.read(true); piece; piece = await follower.read(true)) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(3);
    for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.offset).toBe(pieces[i - 1]!.offset + Buffer.byteLength(pieces[i - 1]!.text));
    const text = pieces.map((p) => p.text).join("");
    expect(text).not.toContain("\uFFFD");
    const tail = (await h.call("get_task_logs", { id: task.id })) as { content: string; truncated: boolean; size_bytes: number };
    expect(tail.truncated).toBe(true);
    expect(tail.content).not.toContain("\uFFFD");
    expect(tail.content).toBe(text);
    expect(pieces.at(-1)!.offset + Buffer.byteLength(pieces.at(-1)!.text)).toBe(tail.size_bytes);
  });

  it("sends the followed task's log lines as task.log, then its end", async () => {
    // The task may end before its stream opens on a slow machine: what was missed is replayed
    // (the hub keeps events for replay once a client listens).
    await open();
    const mark = h.service.events.lastId;
    const job = (await h.call("run_job", { name: entry("talkerJob"), kwargs: { lines: 6, everyMs: 60 } })) as { id: string };
    const task = await waitForTask(h, job.id, "talker");
    const stream = await open(`?task_id=${task.id}`, { "last-event-id": mark });
    await stream.next("the task's end", (e) => e.type === "task.updated" && e.data.id === task.id && e.data.status === "COMPLETED");
    const logs = stream.events.flatMap((e) => (e.type === "task.log" ? [e.data] : []));
    expect(logs.length).toBeGreaterThan(0);
    // Contiguous pieces of one file, from its start: together, exactly the file.
    let offset = 0;
    for (const piece of logs) {
      expect(piece).toMatchObject({ task_id: task.id, attempt: 1, offset });
      offset += Buffer.byteLength(piece.text);
    }
    const text = logs.map((l) => l.text).join("");
    for (let i = 1; i <= 6; i++) expect(text.match(new RegExp(`INFO line ${i} `, "g")), `line ${i}`).toHaveLength(1);
    const file = (await h.call("get_task_logs", { id: task.id })) as { content: string };
    expect(text).toBe(file.content);
    // The log lines came before the task's end on the stream, and its job's events came too.
    const endAt = stream.events.findIndex((e) => e.type === "task.updated" && e.data.status === "COMPLETED");
    expect(stream.events.findLastIndex((e) => e.type === "task.log")).toBeLessThan(endAt);
    await stream.next("the job's end", (e) => e.type === "job.updated" && e.data.id === job.id && e.data.status === "COMPLETED");
  });

  it("replays what a client missed after Last-Event-ID, and tells it to resync when that is unknown", async () => {
    const first = await open();
    const seen = await runAndWait(h, entry("hello"), {});
    const last = await first.next("the first job's end", (e) => e.type === "job.updated" && e.data.id === seen.id && e.data.status === "COMPLETED");
    first.close();
    const missed = await runAndWait(h, entry("hello"), { who: "missed" });

    const again = await open("", { "last-event-id": last.id! });
    await again.next("the missed job's end", (e) => e.type === "job.updated" && e.data.id === missed.id && e.data.status === "COMPLETED");
    expect(jobStatusesIn(again.events, missed.id)).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
    expect(jobStatusesIn(again.events, seen.id)).toEqual([]);

    const lost = await open("", { "last-event-id": "another-process-17" });
    await lost.next("a resync", (e) => e.type === "resync");
  });

  it("replays a followed task's missed end after its log's backlog, not before", async () => {
    const before = await open();
    const job = (await h.call("run_job", { name: entry("talkerJob"), kwargs: { lines: 4, everyMs: 20 } })) as { id: string };
    const last = await before.next("the job's first event", (e) => e.type === "job.updated" && e.data.id === job.id);
    before.close();
    const done = await waitForJob(h, job.id);
    const task = done.tasks.find((t) => t.name === "talker")!;

    const resumed = await open(`?task_id=${task.id}`, { "last-event-id": last.id! });
    await resumed.next("the task's end", (e) => e.type === "task.updated" && e.data.id === task.id && e.data.status === "COMPLETED");
    const endAt = resumed.events.findIndex((e) => e.type === "task.updated" && e.data.status === "COMPLETED");
    const lines = resumed.events.flatMap((e) => (e.type === "task.log" ? [e.data.text] : [])).join("");
    for (let i = 1; i <= 4; i++) expect(lines, `line ${i}`).toContain(`INFO line ${i} `);
    expect(resumed.events.findLastIndex((e) => e.type === "task.log")).toBeLessThan(endAt);
  });

  it("hears what another process does to the store: a run and a cancel from the CLI", async () => {
    // The CLI opens its own service: on PostgreSQL its changes come by NOTIFY; on SQLite the
    // server finds them by looking every 2 s.
    const stream = await open();
    const run = await h.cli("run-job", entry("nap"), "--kwargs", '{"ms":60000}', "--json");
    const { id } = JSON.parse(run.out) as { id: string };
    await stream.next("the nap running", (e) => e.type === "job.updated" && e.data.id === id && e.data.status === "RUNNING");
    expect((await h.cli("job", "cancel", id)).code).toBe(0);
    const cancelled = await stream.next("the cancel", (e) => e.type === "job.updated" && e.data.id === id && e.data.status === "CANCELLED");
    expect(cancelled.data).toMatchObject({ name: "nap" });
    await waitForJob(h, id);
  });

  it("needs the bearer token when one is set", async () => {
    process.env.SERVICE_API_TOKEN = "events-token";
    const refused = await h.http("GET", "/api/v0/events");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    const allowed = await open("", { authorization: "Bearer events-token" });
    expect(allowed.status).toBe(200);
    // Rotating the token ends a stream opened with the old one (checked at each keep-alive).
    process.env.SERVICE_API_TOKEN = "rotated-token";
    await allowed.ended;
    // Ended as a response ends: cut off, it was an error in every browser tab (incomplete chunked encoding).
    expect(allowed.wasCut()).toBe(false);
  });

  it("ends its streams as responses end when the server closes", async () => {
    const own = await startHarness(backend, {}, { longRunning: true });
    try {
      const stream = await openEventStream(`${await own.listen()}/api/v0/events`);
      expect(stream.status).toBe(200);
      await own.app.close();
      await stream.ended;
      expect(stream.wasCut()).toBe(false);
    } finally {
      await own.close();
    }
  });

  it("cuts off a client that stops reading, and the others get everything", async () => {
    const reader = await open();
    // 20 MB of log: far more than the kernel's socket buffers and the 64 KiB bound hold together.
    const job = (await h.call("run_job", { name: entry("talkerJob"), kwargs: { lines: 20_000, everyMs: 0, width: 1_000, waitMs: 500 } })) as { id: string };
    const task = await waitForTask(h, job.id, "talker");
    // A client that asks for the task's log and never reads a byte.
    const port = Number(new URL(base).port);
    const slow = createConnection({ host: "127.0.0.1", port });
    let slowClosed = false;
    slow.on("error", () => undefined);
    slow.on("close", () => (slowClosed = true));
    slow.write(`GET /api/v0/events?task_id=${task.id} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    slow.pause();
    const ended = await waitForJob(h, job.id);
    expect(ended.status).toBe("COMPLETED");
    await reader.next("the job's end", (e) => e.type === "job.updated" && e.data.id === job.id && e.data.status === "COMPLETED");
    expect(taskStatusesIn(reader.events, task.id)).toEqual(["RUNNING@1", "COMPLETED@1"]);
    // The server closed the slow client: reading now ends (a reset or an end) instead of waiting.
    slow.resume();
    await waitFor("the slow client's connection to close", async () => slowClosed);
  });
});



forEachBackend("the event stream's PostgreSQL listener", (backend) => {
  let h: Harness;
  let base = "";
  beforeAll(async () => {
    h = await startHarness(backend, {}, { longRunning: true });
    base = await h.listen();
  });
  afterAll(() => h?.close());

  it("survives a reset of its connection: clients are told to resync, then hear other processes again", async ({ skip }) => {
    if (h.config.sql.dialect !== "postgres") return skip("SQLite has no listener connection");
    const url = h.config.sql.location;
    const db = openStore({ dialect: "postgres", location: url });
    const sender = await createSharedChangeFeed(openNotifyChannel(db, url, () => undefined), { listen: false, onError: () => undefined });
    const stream = await openEventStream(`${base}/api/v0/events`);
    try {
      const schema = pgSchemaOf(url);
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jobhouse-listener' AND query LIKE ${`LISTEN "job_events:${schema}"%`}`.execute(db);
      await stream.next("a resync", (e) => e.type === "resync");
      sender.publish({ type: "job", id: 424242n, name: "elsewhere", status: "RUNNING" });
      const heard = await stream.next("another process's change", (e) => e.type === "job.updated" && e.data.id === "424242");
      expect(heard.data).toEqual({ id: "424242", name: "elsewhere", status: "RUNNING" });
    } finally {
      stream.close();
      await sender.close();
      await db.destroy();
    }
  });
});
