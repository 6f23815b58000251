// Failure notifications (issue 17 item 5), on both backends: a registration's on_failure webhook
// receives the failed run's JobView with a Slack-style `text`, once per failure, from an outbox
// written with the failure; a receiver that errors is retried with backoff; one that never answers
// is given up after MAX_ATTEMPTS with a warning; successful runs send nothing.

import { type IncomingMessage, type Server, createServer } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import type { Logger } from "../src/core/log.js";
import { describeJobFor } from "../src/app/job-describer.js";
import { MAX_ATTEMPTS, deliverDueNotifications, retryDelayMs } from "../src/engine/failure-notifier.js";
import type { JobView, RegisteredJobView } from "../src/models/jobs.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, waitFor, withEngine } from "./support/engine.js";
import { startEngine } from "../src/app/engine-runtime.js";
import { type Harness, startHarness } from "./support/harness.js";

interface Received {
  path: string;
  body: JobView & { text: string };
}

forEachBackend("failure webhooks", (backend) => {
  let h: Harness;
  let receiver: Server;
  let base: string;
  const received: Received[] = [];
  /** Status codes the receiver answers, in order; 200 once they run out. */
  const answers: number[] = [];
  const warnings: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message), error() {} };
  const clock = new ManualClock(Date.parse("2026-11-23T10:00:00Z"));
  const deliver = () => deliverDueNotifications({ db: h.service.db, clock, log, describeJob: describeJobFor(h.service.db) });

  beforeAll(async () => {
    h = await startHarness(backend, {}, { clock });
    receiver = createServer((req: IncomingMessage, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk));
      req.on("end", () => {
        received.push({ path: req.url ?? "", body: JSON.parse(text) as Received["body"] });
        res.statusCode = answers.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    receiver?.close();
    await h?.close();
  });

  const runToEnd = async (name: string) => {
    const engine = await withEngine(h);
    try {
      return await runAndWait(h, name);
    } finally {
      await engine.stop();
    }
  };

  it("posts the failed run's JobView and a one-line text once, and nothing for a run that completes", async () => {
    const view = (await h.call("register_job", { entrypoint: entry("failing"), name: "hooked", on_failure: `${base}/hook` })) as RegisteredJobView;
    expect(view.on_failure).toBe(`${base}/hook`);
    await h.call("register_job", { entrypoint: entry("hello"), name: "hooked_ok", on_failure: `${base}/ok` });
    const failed = await runToEnd("hooked");
    expect(failed.status).toBe("FAILED");
    expect((await runToEnd("hooked_ok")).status).toBe("COMPLETED");
    expect(await deliver()).toBe(1);
    expect(received).toHaveLength(1);
    expect(received[0]!.path).toBe("/hook");
    expect(received[0]!.body).toMatchObject({ id: failed.id, name: "hooked", status: "FAILED", error: expect.stringContaining("the answer was not 42") });
    expect(received[0]!.body.text).toContain(`job hooked (${failed.id}) FAILED: task boom`);
    // Delivered means forgotten: nothing more is sent.
    expect(await deliver()).toBe(0);
    expect(received).toHaveLength(1);
  });

  it("retries a receiver that errors, after its backoff", async () => {
    received.length = 0;
    answers.push(500, 503);
    await h.call("register_job", { entrypoint: entry("failing"), name: "hooked_retry", on_failure: `${base}/retry` });
    await runToEnd("hooked_retry");
    expect(await deliver()).toBe(0);
    expect(await deliver()).toBe(0); // not due yet: the backoff holds it
    clock.advance(retryDelayMs(1));
    expect(await deliver()).toBe(0);
    clock.advance(retryDelayMs(2));
    expect(await deliver()).toBe(1);
    expect(received.map((r) => r.path)).toEqual(["/retry", "/retry", "/retry"]);
  });

  it("gives up on a receiver that never answers after MAX_ATTEMPTS, with a warning", async () => {
    await h.call("register_job", { entrypoint: entry("failing"), name: "hooked_down", on_failure: "http://127.0.0.1:9/nobody" });
    const failed = await runToEnd("hooked_down");
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await deliver();
      clock.advance(retryDelayMs(attempt));
    }
    expect(warnings.some((w) => w.includes(`job ${failed.id}: failure webhook dropped after ${MAX_ATTEMPTS} attempts`))).toBe(true);
    expect(await h.service.db.selectFrom("failure_notifications").select("job_id").execute()).toEqual([]);
  });

  it("is delivered by the background loop of an engine that runs it, as local start does", async () => {
    received.length = 0;
    await h.call("register_job", { entrypoint: entry("failing"), name: "hooked_live", on_failure: `${base}/live` });
    const engine = await startEngine(h.service, { concurrency: 2, background: true, backgroundIntervalMs: 50 });
    try {
      const failed = await runAndWait(h, "hooked_live");
      expect(failed.status).toBe("FAILED");
      const delivered = await waitFor("the webhook to be called", async () => received.find((r) => r.path === "/live"));
      expect(delivered.body).toMatchObject({ id: failed.id, status: "FAILED" });
    } finally {
      await engine.stop();
    }
  });

  it("refuses a webhook that is not an http(s) URL, and replace can remove it", async () => {
    const bad = await h.http("POST", "/api/v0/registered-jobs", { entrypoint: entry("failing"), name: "hooked_bad", on_failure: "file:///etc/passwd" });
    expect(bad.status).toBe(422);
    // It says what it takes (it said only "Invalid URL").
    expect(bad.body).toMatchObject({ code: "invalid", detail: "on_failure: must be an http or https URL" });
    const removed = (await h.call("register_job", { entrypoint: entry("failing"), name: "hooked", replace: true })) as RegisteredJobView;
    expect(removed.on_failure).toBeNull();
  });
});
