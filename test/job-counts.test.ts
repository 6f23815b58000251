// The job counts kept by triggers (store/job-counts.ts) against a count of the jobs table, through
// every way a job's status changes: run, claim, completion, failure, cancel, retention's delete.

import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { JOB_STATUSES } from "../src/core/statuses.js";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import { countJobs, recountJobs } from "../src/store/job-counts.js";
import { deleteJob } from "../src/store/jobs.js";
import { PG_URL, forEachBackend, pgSchemaOf } from "./support/backends.js";
import { entry, waitForJob, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("job counts", (backend) => {
  let h: Harness;
  let engine: EngineRuntime | undefined;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  /** The table counted, and what the triggers kept, status by status. */
  async function countsBothWays(): Promise<{ counted: Record<string, number>; kept: Record<string, number> }> {
    const { rows } = await sql<{ status: string; n: unknown }>`SELECT status, count(*) AS n FROM jobs GROUP BY status`.execute(h.service.db);
    const counted = Object.fromEntries(JOB_STATUSES.map((s) => [s, Number(rows.find((r) => r.status === s)?.n ?? 0)]));
    const kept = Object.fromEntries(await Promise.all(JOB_STATUSES.map(async (s) => [s, await countJobs(h.service.db, s)] as const)));
    return { counted, kept };
  }
  async function expectExact(): Promise<Record<string, number>> {
    const { counted, kept } = await countsBothWays();
    expect(kept).toEqual(counted);
    expect(await countJobs(h.service.db)).toBe(Object.values(counted).reduce((a, b) => a + b, 0));
    return counted;
  }

  it("follows every status change and deletion, and lists' totals use it", async () => {
    await h.call("register_job", { entrypoint: entry("hello"), name: "hello" });
    await h.call("register_job", { entrypoint: entry("failing"), name: "failing" });
    await h.call("register_job", { entrypoint: entry("sleepy"), name: "sleepy" });
    const pending = [];
    for (let i = 0; i < 6; i++) pending.push((await h.call("run_job", { name: "hello" })) as { id: string });
    expect(await expectExact()).toMatchObject({ PENDING: 6, RUNNING: 0 });
    await h.call("cancel_job", { ref: pending[0]!.id });
    expect(await expectExact()).toMatchObject({ PENDING: 5, CANCELLED: 1 });

    engine = await withEngine(h);
    const failed = (await h.call("run_job", { name: "failing" })) as { id: string };
    const sleepy = (await h.call("run_job", { name: "sleepy", kwargs: { ms: 60_000 } })) as { id: string };
    for (const job of pending.slice(1)) await waitForJob(h, job.id);
    await waitForJob(h, failed.id);
    expect(await expectExact()).toMatchObject({ PENDING: 0, RUNNING: 1, COMPLETED: 5, FAILED: 1, CANCELLED: 1 });
    await h.call("cancel_job", { ref: sleepy.id });
    await waitForJob(h, sleepy.id);
    expect(await expectExact()).toMatchObject({ RUNNING: 0, CANCELLED: 2 });

    // The lists' totals: unfiltered and by status from the counts, other filters by counting.
    const total = async (query: string) => ((await h.http("GET", `/api/v0/jobs?${query}`)).body as { total: number }).total;
    expect(await total("limit=1")).toBe(8);
    expect(await total("status=COMPLETED")).toBe(5);
    expect(await total("status=CANCELLED&name=hello")).toBe(1);
    expect(await total("since=2000-01-01T00:00:00Z")).toBe(8);

    await deleteJob(h.service.db, BigInt(pending[1]!.id));
    await deleteJob(h.service.db, BigInt(failed.id));
    expect(await expectExact()).toMatchObject({ COMPLETED: 4, FAILED: 0 });
    expect(await total("limit=1")).toBe(6);
  });

  it("rebuilds from the table when the rows drifted", async () => {
    const before = await expectExact();
    await sql`UPDATE job_counts SET pending = pending + 7, completed = 0`.execute(h.service.db);
    expect((await countsBothWays()).kept).not.toEqual(before);
    await recountJobs(h.service.db);
    expect(await expectExact()).toEqual(before);
  });

  if (backend.name === "distributed") {
    it("stays exact when many connections change jobs at once, with no deadlock", async () => {
      const base = await expectExact();
      const ids = Array.from({ length: 40 }, (_, i) => BigInt(9_000_000 + i));
      // Each transaction moves several jobs (in id order: the jobs' own row locks cannot deadlock), on
      // a connection of its own; twenty connections (more than the 16 shards, so some share a counter row) commit at once.
      const url = h.env.SERVICE_SQL_URL!;
      const clients = await Promise.all(Array.from({ length: 20 }, async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        return client;
      }));
      try {
        await clients[0]!.query(
          `INSERT INTO jobs (id, name, status, run_type, preservation_mode, entrypoint, kwargs, created_at) SELECT id, 'counted', 'PENDING', 'MANUAL', 'NONE', 'x:y', '{}', 0 FROM unnest($1::bigint[]) AS t(id)`,
          [ids.map(String)],
        );
        const moves = ["RUNNING", "COMPLETED", "FAILED", "PENDING"];
        await Promise.all(clients.map(async (client, c) => {
          for (let round = 0; round < 25; round++) {
            // Overlapping sets: a transaction can reach a job another holds after its own first change.
            const picked = ids.filter((_, i) => ((i + 1) * 7919 * (c + 3) + round * 104729) % 5 < 2);
            await client.query("BEGIN");
            for (const id of picked) await client.query("UPDATE jobs SET status = $1 WHERE id = $2", [moves[(c + round) % moves.length], String(id)]);
            await client.query("COMMIT");
          }
        }));
      } finally {
        await Promise.all(clients.map((client) => client.end()));
      }
      const after = await expectExact();
      expect(Object.values(after).reduce((a, b) => a + b, 0)).toBe(Object.values(base).reduce((a, b) => a + b, 0) + ids.length);

      // A session whose search_path does not lead to this schema (an operator's psql) counts here too.
      const schema = pgSchemaOf(url);
      const operator = new pg.Client({ connectionString: PG_URL });
      await operator.connect();
      try {
        await operator.query(`UPDATE ${schema}.jobs SET status = 'CANCELLED' WHERE id = $1`, [String(ids[0])]);
      } finally {
        await operator.end();
      }
      expect((await expectExact()).CANCELLED).toBeGreaterThan(0);
    }, 60_000);
  }
});
