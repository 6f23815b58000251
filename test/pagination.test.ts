// Cursor pagination and filters over the lists: every item exactly once, totals that count all.

import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("pagination and filters", (backend) => {
  let h: Harness;
  const created: string[] = [];
  beforeAll(async () => {
    h = await startHarness(backend);
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "alpha" });
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "beta" });
    for (let i = 0; i < 120; i++) {
      const job = (await h.call("run_job", { name: i % 3 === 0 ? "alpha" : "beta" })) as { id: string };
      created.push(job.id);
    }
    for (let i = 0; i < 7; i++) await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: `reg_${i}`, enabled: i % 2 === 0 });
  });
  afterAll(() => h?.close());

  it("walks every job exactly once, newest first", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/api/v0/jobs?limit=25${cursor ? `&cursor=${cursor}` : ""}`;
      const page = (await h.http("GET", query)).body as { items: { id: string }[]; total: number; next_cursor: string | null };
      expect(page.total).toBe(120);
      seen.push(...page.items.map((j) => j.id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual([...created].reverse());
  });

  it("defaults to 50 items", async () => {
    const page = (await h.http("GET", "/api/v0/jobs")).body as { items: unknown[]; next_cursor: string | null };
    expect(page.items).toHaveLength(50);
    expect(page.next_cursor).not.toBeNull();
  });

  it("filters by name, status and since", async () => {
    const alpha = (await h.http("GET", "/api/v0/jobs?name=alpha&limit=500")).body as { items: { name: string }[]; total: number };
    expect(alpha.total).toBe(40);
    expect(alpha.items.every((j) => j.name === "alpha")).toBe(true);
    await h.call("cancel_job", { ref: created[0] });
    const cancelled = (await h.http("GET", "/api/v0/jobs?status=CANCELLED")).body as { total: number };
    expect(cancelled.total).toBe(1);
    const future = (await h.http("GET", "/api/v0/jobs?since=2999-01-01T00:00:00Z")).body as { total: number };
    expect(future.total).toBe(0);
    const past = (await h.http("GET", "/api/v0/jobs?since=2000-01-01T00:00:00Z")).body as { total: number };
    expect(past.total).toBe(120);
  });

  it("pages registered jobs by name and filters enabled", async () => {
    const first = (await h.http("GET", "/api/v0/registered-jobs?limit=4&name=reg_")).body as { items: { name: string }[]; next_cursor: string };
    const second = (await h.http("GET", `/api/v0/registered-jobs?limit=4&name=reg_&cursor=${first.next_cursor}`)).body as {
      items: { name: string }[];
      next_cursor: string | null;
    };
    expect([...first.items, ...second.items].map((r) => r.name)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `reg_${i}`));
    expect(second.next_cursor).toBeNull();
    const enabled = (await h.http("GET", "/api/v0/registered-jobs?enabled=true&name=reg_")).body as { total: number };
    expect(enabled.total).toBe(4);
    const prefixed = (await h.http("GET", "/api/v0/registered-jobs?name=reg_1")).body as { total: number };
    expect(prefixed.total).toBe(1);
  });

  it("enable and disable switch the schedule and are idempotent", async () => {
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "sched", schedule: "*/10 * * * *" });
    const off = (await h.http("POST", "/api/v0/registered-jobs/sched/disable")).body as { enabled: boolean; next_run_at: string | null };
    expect(off).toMatchObject({ enabled: false, next_run_at: null });
    expect((await h.http("POST", "/api/v0/registered-jobs/sched/disable")).status).toBe(200);
    const on = (await h.http("POST", "/api/v0/registered-jobs/sched/enable")).body as { enabled: boolean; next_run_at: string };
    expect(on.enabled).toBe(true);
    expect(new Date(on.next_run_at).getUTCMinutes() % 10).toBe(0);
  });
});
