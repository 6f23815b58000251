// Every job and task transition reaches the change feed once, from where it committed: run_job,
// the worker's claims and attempts, job completion, and cancel_job.

import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { type ChangeFeed, type Published, type Transition, createSharedChangeFeed, decodePayload } from "../src/engine/changes.js";
import { type Store, openStore } from "../src/store/db.js";
import { listenerConnectionString, openNotifyChannel } from "../src/store/notify.js";
import { BACKENDS, forEachBackend, pgSchemaOf } from "./support/backends.js";
import { entry, runAndWait, waitFor, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("the change feed", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  const seen: Transition[] = [];
  beforeAll(async () => {
    h = await startHarness(backend);
    h.service.changes.subscribe(({ change }) => change.type !== "resync" && seen.push(change));
    engine = await withEngine(h, 2);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("publishes each transition of a run once, in order", async () => {
    const job = await runAndWait(h, entry("pipeline"), { n: 1 });
    expect(job.status).toBe("COMPLETED");
    const ofJob = seen.filter((c) => (c.type === "job" ? c.id.toString() === job.id : c.jobId.toString() === job.id));
    const jobStatuses = ofJob.filter((c) => c.type === "job").map((c) => c.status);
    expect(jobStatuses).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
    for (const task of job.tasks) {
      const statuses = ofJob.filter((c) => c.type === "task" && c.id.toString() === task.id).map((c) => c.status);
      expect(statuses, task.name).toEqual(["RUNNING", "COMPLETED"]);
    }
    // The job's end comes after the last task's.
    expect(ofJob[ofJob.length - 1]).toMatchObject({ type: "job", status: "COMPLETED" });
  });

  it("publishes retries with their next attempt, and a cancel", async () => {
    const flaky = await runAndWait(h, entry("flaky"), { failures: 1 });
    const task = flaky.tasks.filter((t) => t.name === "flaky")[1]!; // [0] is the job's entry task, also named flaky
    const statuses = seen.filter((c) => c.type === "task" && c.id.toString() === task.id).map((c) => `${c.status}@${(c as { attempt: number }).attempt}`);
    expect(statuses).toEqual(["RUNNING@1", "PENDING@2", "RUNNING@2", "COMPLETED@2"]);

    const slow = (await h.call("run_job", { name: entry("lingeringJob"), kwargs: { ms: 5000 } })) as { id: string };
    // The lingering task itself, not the job's entry task: a cancel while the entry completes
    // (on PostgreSQL) lets it insert its child born CANCELLED, a task no cancel ended or published.
    await waitFor("the slow task to run", async () =>
      ((await h.call("get_job", { ref: slow.id })) as { tasks: { name: string; status: string }[] }).tasks.some((t) => t.name === "lingering" && t.status === "RUNNING"),
    );
    await h.call("cancel_job", { ref: slow.id });
    await waitForJob(h, slow.id);
    expect(seen.filter((c) => c.type === "job" && c.id.toString() === slow.id).map((c) => c.status)).toEqual(["PENDING", "RUNNING", "CANCELLED"]);
    // Every task the cancel ended is published as ended (found by trying the product: a follower
    // of the event stream saw them RUNNING for ever).
    const detail = (await h.call("get_job", { ref: slow.id })) as { tasks: { id: string; status: string }[] };
    const ended = detail.tasks.filter((t) => t.status === "CANCELLED");
    expect(ended.length).toBeGreaterThan(0);
    for (const t of ended) expect(seen.filter((c) => c.type === "task" && c.id.toString() === t.id).at(-1)).toMatchObject({ status: "CANCELLED" });
  });
});

const distributed = BACKENDS.find((b) => b.name === "distributed");

describe.runIf(distributed)("the change feed across processes (PostgreSQL NOTIFY)", () => {
  let env: Record<string, string>;
  const stores: Store[] = [];
  const feeds: ChangeFeed[] = [];
  const open = async (listen: boolean) => {
    const db = openStore({ dialect: "postgres", location: env.SERVICE_SQL_URL! });
    stores.push(db);
    const feed = await createSharedChangeFeed(openNotifyChannel(db, env.SERVICE_SQL_URL!, () => undefined), { listen, onError: () => undefined });
    feeds.push(feed);
    const seen: Published[] = [];
    feed.subscribe((p) => seen.push(p));
    return { db, feed, seen };
  };
  beforeAll(async () => {
    env = (await distributed!.freshEnv()) as Record<string, string>;
  });
  afterAll(async () => {
    for (const feed of feeds) await feed.close();
    for (const db of stores) await db.destroy();
    await distributed!.dispose(env);
  });

  it("delivers another process's changes once, batched, and never echoes a process's own", async () => {
    const sender = await open(false);
    const receiver = await open(true);
    // A claim of 300 tasks in one turn: more than one NOTIFY payload's worth.
    for (let i = 0; i < 300; i++) sender.feed.publish({ type: "task", id: BigInt(i), jobId: 7n, status: "CLAIMED", attempt: 1 });
    sender.feed.publish({ type: "job", id: 7n, status: "COMPLETED" }, true);
    await waitFor("the receiver to see all", async () => receiver.seen.length === 301);
    expect(receiver.seen[0]).toEqual({ change: { type: "task", id: 0n, jobId: 7n, status: "CLAIMED", attempt: 1 }, ready: false });
    expect(receiver.seen[300]).toEqual({ change: { type: "job", id: 7n, status: "COMPLETED" }, ready: true });
    // The sender's listeners had each change once, at once.
    expect(sender.seen).toHaveLength(301);
    receiver.feed.publish({ type: "job", id: 8n, status: "PENDING" }, true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.seen.filter((p) => p.change.type === "job" && p.change.id === 8n)).toHaveLength(1);
  });

  it("reconnects a dropped listener by itself and tells its subscribers to resync", async () => {
    const sender = await open(false);
    const receiver = await open(true);
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jobhouse-listener' AND pid <> pg_backend_pid() AND query LIKE ${`LISTEN "job_events:${pgSchemaOf(env.SERVICE_SQL_URL!)}"%`}`.execute(sender.db);
    await waitFor("a resync", async () => receiver.seen.some((p) => p.change.type === "resync" && p.ready));
    sender.feed.publish({ type: "job", id: 9n, status: "PENDING" }, true);
    await waitFor("a change after the reconnect", async () => receiver.seen.some((p) => p.change.type === "job" && p.change.id === 9n));
  });

  // Found by trying the deployment guide: pg takes the URL's application_name over the client's
  // option, so the listener showed as the deployment's plain name, not "<name>:listener".
  it("names its listener connection after the deployment's application_name, with :listener", async () => {
    const url = new URL(env.SERVICE_SQL_URL!);
    url.searchParams.set("application_name", "jobhouse_prod");
    const listener = new pg.Client(listenerConnectionString(url.toString()));
    await listener.connect();
    try {
      expect((await listener.query("SHOW application_name")).rows[0].application_name).toBe("jobhouse_prod:listener");
    } finally {
      await listener.end();
    }
    expect(listenerConnectionString(env.SERVICE_SQL_URL!).application_name).toBe("jobhouse-listener");
  });

  it("reads its own wire form back and ignores garbage", () => {
    expect(decodePayload("not json")).toBeUndefined();
    expect(decodePayload('{"o":"x","c":[["q",1]]}')).toBeUndefined();
    expect(decodePayload('{"o":"x","c":[["t","12","3","RUNNING",2,0]]}')).toEqual({
      origin: "x",
      changes: [{ change: { type: "task", id: 12n, jobId: 3n, status: "RUNNING", attempt: 2 }, ready: false }],
    });
  });
});
