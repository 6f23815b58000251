// Prepared queries (store/prepared.ts): built and compiled once per dialect, then executed with
// each call's values in their places, on both backends, inside and outside transactions.

import { afterAll, beforeAll, expect, it } from "vitest";
import { startRun } from "../src/engine/start-run.js";
import { claimReadyTasks } from "../src/store/claims.js";
import { prepared } from "../src/store/prepared.js";
import type { Store } from "../src/store/db.js";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

const workerById = prepared((db, v: { id: bigint }) => db.selectFrom("workers").select(["id", "status", "hostname"]).where("id", "=", v.id));
const renameWorker = prepared((db, v: { id: bigint; host: string }) =>
  db.updateTable("workers").set({ hostname: v.host }).where("id", "=", v.id).where("status", "in", ["ACTIVE", "STOPPED"]),
);
let shapesBuilt = 0;
const workersWith = prepared((db, v: { status: string | undefined; after: bigint | undefined }, given) => {
  shapesBuilt++;
  let query = db.selectFrom("workers").select("id").orderBy("id");
  if (given.status) query = query.where("status", "=", v.status!);
  if (given.after) query = query.where("id", ">", v.after!);
  return query;
});

forEachBackend("prepared queries", (backend) => {
  let h: Harness;
  let db: Store;
  beforeAll(async () => {
    h = await startHarness(backend);
    db = h.service.db;
    for (const [id, status] of [[1n, "ACTIVE"], [2n, "LOST"], [3n, "STOPPED"]] as const) {
      await db
        .insertInto("workers")
        .values({ id, hostname: "h", pid: 1, status, concurrency: 1, started_at: 0n, last_heartbeat: 0n, tasks_completed: 0, tasks_failed: 0 })
        .execute();
    }
  });
  afterAll(() => h?.close());

  it("bind each call's values and keep the constants built in", async () => {
    expect(await workerById.first(db, { id: 2n })).toEqual({ id: 2n, status: "LOST", hostname: "h" });
    expect(await workerById.rows(db, { id: 3n })).toEqual([{ id: 3n, status: "STOPPED", hostname: "h" }]);
    expect(await workerById.first(db, { id: 99n })).toBeUndefined();
    // The status list is a constant of the build: LOST is not in it.
    expect(await renameWorker.affected(db, { id: 1n, host: "one" })).toBe(1);
    expect(await renameWorker.affected(db, { id: 2n, host: "two" })).toBe(0);
    expect(await renameWorker.affected(db, { id: 3n, host: "three" })).toBe(1);
    expect((await db.selectFrom("workers").select(["id", "hostname"]).orderBy("id").execute()).map((w) => w.hostname)).toEqual(["one", "h", "three"]);
  });

  it("run in the transaction they are given, and roll back with it", async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        expect(await renameWorker.affected(tx, { id: 1n, host: "inside" })).toBe(1);
        expect(await workerById.first(tx, { id: 1n })).toMatchObject({ hostname: "inside" });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await workerById.first(db, { id: 1n })).toMatchObject({ hostname: "one" });
  });

  it("build each shape of optional filters once, and bind each call's values into its own", async () => {
    const built = shapesBuilt;
    const ids = async (v: { status: string | undefined; after: bigint | undefined }) => (await workersWith.rows(db, v)).map((w) => w.id);
    expect(await ids({ status: undefined, after: undefined })).toEqual([1n, 2n, 3n]);
    expect(await ids({ status: "LOST", after: undefined })).toEqual([2n]);
    expect(await ids({ status: "ACTIVE", after: undefined })).toEqual([1n]);
    expect(await ids({ status: undefined, after: 1n })).toEqual([2n, 3n]);
    expect(await ids({ status: "STOPPED", after: 1n })).toEqual([3n]);
    expect(await ids({ status: "ACTIVE", after: 1n })).toEqual([]);
    expect(await ids({ status: undefined, after: undefined })).toEqual([1n, 2n, 3n]);
    // Four shapes, each built once for this dialect (another backend's suite may have built its own).
    expect(shapesBuilt - built).toBeLessThanOrEqual(4);
  });

  it("claim tasks whose ids are near 2^63 exactly (the SQLite claim's id lists travel as JSON)", async () => {
    const { ids, clock, config } = h.service;
    const job = await startRun(db, ids, clock, config, { name: "big-ids", entrypoint: "test/fixtures/jobs.ts:hello", kwargs: {}, runType: "MANUAL", preservationMode: "NONE", registeredName: null });
    const entry = await db.selectFrom("tasks").select("id").where("job_id", "=", job.id).executeTakeFirstOrThrow();
    const huge = (1n << 63n) - 2n;
    await db.updateTable("tasks").set({ id: huge }).where("id", "=", entry.id).execute();
    const claim = await claimReadyTasks(db, { workerId: 1n, limit: 4, nowMs: clock.now(), logDir: config.logDir, settledCandidates: [job.id] });
    expect(claim.tasks.map((t) => t.id)).toEqual([huge]);
    expect(claim.startedJobs).toEqual([job.id]);
    const stored = await db.selectFrom("tasks").select(["status", "worker_id"]).where("id", "=", huge).executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: "RUNNING", worker_id: 1n });
  });

  it("refuse a call that lacks a value instead of binding NULL", async () => {
    await expect(workerById.first(db, {} as { id: bigint })).rejects.toThrow(/no value for "id"/);
  });
});
