// A long-running process keeps its snowflake node lease through a store outage, and exits when
// another process took the node meanwhile (two processes making ids with one node could collide).

import { afterAll, beforeAll, expect, it } from "vitest";
import { keepNodeLease } from "../src/app/context.js";
import { systemClock } from "../src/core/clock.js";
import { createLogger } from "../src/core/log.js";
import { leaseNode } from "../src/store/node-leases.js";
import { forEachBackend } from "./support/backends.js";
import { waitFor } from "./support/engine.js";
import { storeOutage } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("snowflake node leases", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  // Found by trying the product: a renewal that failed waited a third of the lease to try again,
  // and one that found the node taken by another process was ignored.
  it("retries a failed renewal within seconds, then exits when another process took the node", async () => {
    const holder = `test:${process.pid}:lease`;
    const node = await leaseNode(h.service.db, holder, systemClock.now(), 60_000);
    const expiresAt = async () => Number((await h.service.db.selectFrom("node_leases").select("expires_at").where("node", "=", node).executeTakeFirstOrThrow()).expires_at);
    const outage = storeOutage(h.service.db, true);
    const lines: string[] = [];
    let lost = 0;
    const before = await expiresAt();
    const lease = keepNodeLease(outage.db, node, holder, systemClock, createLogger("info", (line) => lines.push(line)), { everyMs: 10, retryMs: 20, onLost: () => (lost += 1) });
    try {
      await waitFor("failed renewals", async () => lines.some((l) => /renewal of snowflake node \d+'s lease failed \(1 in a row\), retrying in 0.02 s/.test(l)));
      outage.down = false;
      await waitFor("the renewal to work again", async () => (await expiresAt()) > before && lines.some((l) => /lease works again after \d+ failure/.test(l)));
      expect(lost).toBe(0);
      // Another process took the node while this one could not renew: this one must go.
      await h.service.db.updateTable("node_leases").set({ holder: "another:1:process" }).where("node", "=", node).execute();
      await waitFor("the lost lease to be noticed", async () => lost > 0);
      expect(lines.some((l) => l.includes(`snowflake node ${node} is leased by another process now`))).toBe(true);
    } finally {
      lease.stop();
      await h.service.db.deleteFrom("node_leases").where("node", "=", node).execute();
    }
  });
});
