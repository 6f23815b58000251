// The run_idempotency_keys table: which job a run_job idempotency key started, within its window.

import { sql } from "kysely";
import type { Store } from "./db.js";

export interface KeyClaim {
  key: string;
  jobId: bigint;
  fingerprint: string;
  nowMs: number;
  /** Uses older than this have expired: the key may start a new job. */
  cutoffMs: number;
}

/**
 * Takes the key for `jobId` when it is free or expired; true when taken. One statement: of two
 * requests racing with one key, the second waits for the first to commit and then finds the key in
 * use (or takes it if the first rolled back). Only the key's own row decides: a subquery here would
 * read the statement's snapshot, from before the first request committed its job. (A deleted job
 * takes its keys with it: see deleteJob.)
 */
export async function claimIdempotencyKey(tx: Store, c: KeyClaim): Promise<boolean> {
  const { rows } = await sql<{ job_id: bigint }>`
    INSERT INTO run_idempotency_keys (key, job_id, fingerprint, created_at)
    VALUES (${c.key}, ${c.jobId}, ${c.fingerprint}, ${c.nowMs})
    ON CONFLICT (key) DO UPDATE SET job_id = excluded.job_id, fingerprint = excluded.fingerprint, created_at = excluded.created_at
    WHERE run_idempotency_keys.created_at < ${c.cutoffMs}
    RETURNING job_id`.execute(tx);
  return rows.length > 0;
}

export async function findIdempotencyKey(db: Store, key: string): Promise<{ job_id: bigint; fingerprint: string; created_at: bigint } | undefined> {
  return db.selectFrom("run_idempotency_keys").select(["job_id", "fingerprint", "created_at"]).where("key", "=", key).executeTakeFirst();
}

/** Forgets keys whose window has passed (retention); returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Store, cutoffMs: number): Promise<number> {
  const result = await db.deleteFrom("run_idempotency_keys").where("created_at", "<", BigInt(cutoffMs)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
