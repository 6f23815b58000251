// Cached read results never go stale: writes from this connection and from other processes'
// connections are both seen by the next read.

import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";
import { ResultCache } from "../src/operations/result-cache.js";

forEachBackend("result cache", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  const total = async () => ((await h.http("GET", "/api/v0/jobs")).body as { total: number }).total;

  it("sees writes made through the same connection", async () => {
    const before = await total();
    expect(await total()).toBe(before);
    await h.http("POST", "/api/v0/jobs:run", { name: "test/fixtures/jobs.ts:hello" });
    expect(await total()).toBe(before + 1);
  });

  it("sees writes made by another connection (the CLI in-process)", async () => {
    const before = await total();
    expect((await h.cli("run-job", "test/fixtures/jobs.ts:hello")).code).toBe(0);
    expect(await total()).toBe(before + 1);
    const job = ((await h.http("GET", "/api/v0/jobs?limit=1")).body as { items: { id: string; status: string }[] }).items[0]!;
    expect(job.status).toBe("PENDING");
    expect((await h.cli("job", "cancel", job.id)).code).toBe(0);
    const after = ((await h.http("GET", "/api/v0/jobs?limit=1")).body as { items: { status: string }[] }).items[0]!;
    expect(after.status).toBe("CANCELLED");
  });

  it("keeps an output only where it may return it again (SQLite, a cache with room)", async () => {
    const compute = async () => ({ total: 1 });
    const cache = new ResultCache();
    const first = await cache.through(h.service.db, () => "k", compute);
    // PostgreSQL has no store version: every read is computed, and none is kept.
    expect(cache.keeps(first)).toBe(backend.name === "local");
    if (backend.name === "local") expect(await cache.through(h.service.db, () => "k", compute)).toBe(first);
    const uncached = new ResultCache(0);
    expect(uncached.keeps(await uncached.through(h.service.db, () => "k", compute))).toBe(false);
  });
});
