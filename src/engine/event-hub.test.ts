import { describe, expect, it } from "vitest";
import { createLocalChangeFeed } from "./changes.js";
import { type HubBatch, createEventHub } from "./event-hub.js";
import type { Store } from "../store/db.js";

// Every change below carries its job's name, so the hub never reads the store.
const noStore = {} as Store;

describe("the event hub", () => {
  it("numbers changes, batches them, and replays what a reconnecting client missed", async () => {
    const feed = createLocalChangeFeed();
    const hub = createEventHub(feed, noStore, { logDir: "/nowhere", retained: 3, batchIntervalMs: 5 });
    const batches: HubBatch[] = [];
    hub.subscribe((b) => batches.push(b));
    feed.publish({ type: "job", id: 1n, name: "a", status: "PENDING" });
    feed.publish({ type: "task", id: 2n, jobId: 1n, status: "RUNNING", attempt: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const events = batches.flatMap((b) => b.events);
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(batches.map((b) => b.text).join("")).toBe(`id: ${events[0]!.id}\nevent: job.updated\ndata: {"id":"1","name":"a","status":"PENDING"}\n\nid: ${events[1]!.id}\nevent: task.updated\ndata: {"id":"2","job_id":"1","status":"RUNNING","attempt":1}\n\n`);
    expect(hub.since(events[0]!.id)?.map((e) => e.seq)).toEqual([2]);
    expect(hub.since(hub.lastId)).toEqual([]);

    // At least the last 3 are held (trimmed in steps): past them, an id's successors may be gone;
    // also unknown are another process's id and a future one.
    for (let i = 0; i < 4; i++) feed.publish({ type: "job", id: 1n, name: "a", status: "RUNNING" });
    expect(hub.since(events[0]!.id)).toBeUndefined();
    expect(hub.since(events[1]!.id)).toBeUndefined();
    expect(hub.since(`${events[0]!.id.split("-")[0]}-3`)?.map((e) => e.seq)).toEqual([4, 5, 6]);
    expect(hub.since("other-2")).toBeUndefined();
    expect(hub.since(`${events[0]!.id.split("-")[0]}-99`)).toBeUndefined();
  });
});
