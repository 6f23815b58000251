import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusGuard } from "./by-id.js";
import { type Store, openStore } from "./db.js";
import { migrateToLatest } from "./migrate.js";

// The plan SQLite picks for an update of tasks found by id, with thousands of pending tasks.
describe("statusGuard on SQLite", () => {
  let db: Store;
  beforeAll(async () => {
    db = openStore({ dialect: "sqlite", location: ":memory:" });
    await migrateToLatest(db);
    await sql`INSERT INTO jobs (id, name, status, run_type, preservation_mode, entrypoint, kwargs, created_at) VALUES (1, 'j', 'RUNNING', 'MANUAL', 'NONE', 'x:y', '{}', 0)`.execute(db);
    for (let start = 10; start < 5010; start += 500) {
      const rows = Array.from({ length: 500 }, (_, i) => ({
        id: BigInt(start + i), job_id: 1n, name: "n", kind: "task", entrypoint: "x:y", status: "PENDING", attempt: 1, max_attempts: 1, kwargs: "{}", pending_deps: 0, ready_at: 0n, created_at: 0n, backoff_ms: 0n,
      }));
      await db.insertInto("tasks").values(rows as never).execute();
    }
  });
  afterAll(async () => db.destroy());

  const planOf = async (guard: ReturnType<typeof statusGuard> | null) => {
    let update = db.updateTable("tasks").set({ pending_deps: 0 }).where("id", "in", [11n, 12n]);
    update = guard ? update.where(guard) : update.where("status", "=", "PENDING");
    const compiled = update.compile();
    const rows = await db.executeQuery<{ detail: string }>({ ...compiled, sql: `EXPLAIN QUERY PLAN ${compiled.sql}` });
    return rows.rows.map((r) => r.detail).join("; ");
  };

  it("finds the tasks by id, where a plain status term reads every pending task through tasks_claim", async () => {
    expect(await planOf(null)).toMatch(/tasks_claim/);
    const guarded = await planOf(statusGuard(db, "PENDING"));
    expect(guarded).not.toMatch(/tasks_claim/);
    expect(guarded).toMatch(/\(id=\?\)/);
  });
});
