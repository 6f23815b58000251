// Leases on object table names (migration 004): take, renew, release. Taking is one upsert that
// succeeds only on a free or expired row, so it is race-free on both dialects.

import { sql } from "kysely";
import type { Store } from "./db.js";

/** True when `holder` now holds `tableName` until `expiresAtMs`. */
export async function tryTakeName(db: Store, tableName: string, holder: string, nowMs: number, expiresAtMs: number): Promise<boolean> {
  const { rows } = await sql<{ holder: string }>`
    INSERT INTO object_name_locks (table_name, holder, expires_at) VALUES (${tableName}, ${holder}, ${expiresAtMs})
    ON CONFLICT (table_name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE object_name_locks.expires_at < ${nowMs}
    RETURNING holder`.execute(db);
  return rows[0]?.holder === holder;
}

/** Extends a lease still held; false when it was lost (expired and taken by another). */
export async function renewName(db: Store, tableName: string, holder: string, expiresAtMs: number): Promise<boolean> {
  const result = await db.updateTable("object_name_locks").set({ expires_at: expiresAtMs }).where("table_name", "=", tableName).where("holder", "=", holder).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseName(db: Store, tableName: string, holder: string): Promise<void> {
  await db.deleteFrom("object_name_locks").where("table_name", "=", tableName).where("holder", "=", holder).execute();
}
