// Idempotency keys of run_job (issue 17 item 3), on both backends: a key used again within its
// window returns the job its first use started (however the kwargs' keys are ordered), a key reused
// for another request is 409, concurrent requests with one key make one job, and after the window
// (or once the key's job is gone) the key starts a new run. REST, MCP and the CLI take the same field.

import { afterAll, beforeAll, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import { applyRetention } from "../src/engine/background.js";
import type { JobView } from "../src/models/jobs.js";
import { silentLogger } from "../src/core/log.js";
import { forEachBackend } from "./support/backends.js";
import { entry } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("run_job idempotency keys", (backend) => {
  let h: Harness;
  const clock = new ManualClock(Date.parse("2026-11-23T09:00:00Z"));
  beforeAll(async () => {
    h = await startHarness(backend, {}, { clock });
  });
  afterAll(() => h?.close());

  const run = (body: Record<string, unknown>) => h.http("POST", "/api/v0/jobs:run", body);
  const jobsNamed = async (name: string) => ((await h.http("GET", `/api/v0/jobs?name=${name}`)).body as { total: number }).total;

  it("returns the first job for a repeated key, whatever the order of the kwargs' keys", async () => {
    const first = await run({ name: entry("typed"), kwargs: { n: 2, label: "x" }, idempotency_key: "k-repeat" });
    expect(first.status).toBe(201);
    const again = await run({ name: entry("typed"), kwargs: { label: "x", n: 2 }, idempotency_key: "k-repeat" });
    expect(again.status).toBe(201);
    expect((again.body as JobView).id).toBe((first.body as JobView).id);
    expect(await jobsNamed("typed")).toBe(1);
  });

  it("refuses a key reused for a different request with 409", async () => {
    await run({ name: entry("hello"), kwargs: { who: "ann" }, idempotency_key: "k-mismatch" });
    const other = await run({ name: entry("hello"), kwargs: { who: "bo" }, idempotency_key: "k-mismatch" });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "idempotency_key_reused", detail: expect.stringContaining("k-mismatch") });
    // Another priority is another request too (it returned the first job).
    expect((await run({ name: entry("hello"), kwargs: { who: "ann" }, priority: 5, idempotency_key: "k-mismatch" })).status).toBe(409);
  });

  it("makes one job of twelve concurrent requests with one key", async () => {
    const before = await jobsNamed("sleepy");
    const answers = await Promise.all(Array.from({ length: 12 }, () => run({ name: entry("sleepy"), kwargs: { ms: 1 }, idempotency_key: "k-race" })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    expect(new Set(answers.map((a) => (a.body as JobView).id)).size).toBe(1);
    expect(await jobsNamed("sleepy")).toBe(before + 1);
  });

  it("starts a new job once the window has passed, and retention forgets expired keys", async () => {
    const first = (await run({ name: entry("hello"), idempotency_key: "k-window" })).body as JobView;
    clock.advance((h.service.config.idempotencyWindowS - 60) * 1000);
    expect(((await run({ name: entry("hello"), idempotency_key: "k-window" })).body as JobView).id).toBe(first.id);
    clock.advance(120 * 1000);
    const later = (await run({ name: entry("hello"), idempotency_key: "k-window" })).body as JobView;
    expect(later.id).not.toBe(first.id);
    // Every key used so far is now past its window but k-window's second claim.
    clock.advance(h.service.config.idempotencyWindowS * 1000 + 1);
    await applyRetention({ db: h.service.db, ids: h.service.ids, clock, config: h.service.config, log: silentLogger, jobs: h.service.jobs, changes: h.service.changes });
    expect(await h.service.db.selectFrom("run_idempotency_keys").select("key").execute()).toEqual([]);
  });

  it("takes the key from MCP and the CLI", async () => {
    const client = await h.mcp();
    const viaTool = await client.callTool({ name: "run_job", arguments: { name: entry("hello"), idempotency_key: "k-surfaces" } });
    const id = (viaTool.structuredContent as { id: string }).id;
    const again = await client.callTool({ name: "run_job", arguments: { name: entry("hello"), idempotency_key: "k-surfaces" } });
    expect((again.structuredContent as { id: string }).id).toBe(id);
    const cli = await h.cli("run-job", entry("hello"), "--idempotency-key", "k-surfaces", "--json");
    expect(cli.code, cli.err).toBe(0);
    expect((JSON.parse(cli.out) as JobView).id).toBe(id);
  });
});
