// Snowflake node numbers leased through SQL so that live processes never share one (CONTRACT §2).

import { MAX_NODE } from "../core/ids.js";
import { isUniqueViolation } from "./errors.js";
import type { Store } from "./db.js";

/** Leases a free node number for `holder` until `nowMs + ttlMs`; expired leases are reused. */
export async function leaseNode(db: Store, holder: string, nowMs: number, ttlMs: number): Promise<number> {
  const start = Math.floor(Math.random() * (MAX_NODE + 1));
  for (let i = 0; i <= MAX_NODE; i++) {
    const node = (start + i) % (MAX_NODE + 1);
    // Take over an expired lease; the guard makes two processes racing for it pick one winner.
    const taken = await db
      .updateTable("node_leases")
      .set({ holder, expires_at: nowMs + ttlMs })
      .where("node", "=", node)
      .where("expires_at", "<", BigInt(nowMs))
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return node;
    try {
      await db.insertInto("node_leases").values({ node, holder, expires_at: nowMs + ttlMs }).execute();
      return node;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw new Error(`all ${MAX_NODE + 1} snowflake node numbers are leased`);
}

export async function renewNode(db: Store, node: number, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
  const result = await db
    .updateTable("node_leases")
    .set({ expires_at: nowMs + ttlMs })
    .where("node", "=", node)
    .where("holder", "=", holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseNode(db: Store, node: number, holder: string): Promise<void> {
  await db.deleteFrom("node_leases").where("node", "=", node).where("holder", "=", holder).execute();
}
