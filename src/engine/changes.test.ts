import { describe, expect, it } from "vitest";
import { type Published, createLocalChangeFeed } from "./changes.js";

describe("the local change feed", () => {
  it("hands each change to every listener in order, and stops after unsubscribe", () => {
    const feed = createLocalChangeFeed();
    const seen: Published[] = [];
    const stop = feed.subscribe((p) => seen.push(p));
    feed.publish({ type: "job", id: 1n, status: "PENDING" }, true);
    feed.publish({ type: "task", id: 2n, jobId: 1n, status: "RUNNING", attempt: 1 });
    stop();
    feed.publish({ type: "job", id: 1n, status: "COMPLETED" });
    expect(seen).toEqual([
      { change: { type: "job", id: 1n, status: "PENDING" }, ready: true },
      { change: { type: "task", id: 2n, jobId: 1n, status: "RUNNING", attempt: 1 }, ready: false },
    ]);
  });

  it("keeps a throwing listener from harming the others", () => {
    const errors: unknown[] = [];
    const feed = createLocalChangeFeed((e) => errors.push(e));
    const seen: string[] = [];
    feed.subscribe(() => {
      throw new Error("listener bug");
    });
    feed.subscribe(({ change }) => change.type !== "resync" && seen.push(change.status));
    feed.publish({ type: "job", id: 1n, status: "RUNNING" });
    expect(seen).toEqual(["RUNNING"]);
    expect(errors).toHaveLength(1);
  });
});
