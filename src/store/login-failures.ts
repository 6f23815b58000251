// Failed logins per username (CONTRACT §8 throttling), kept in the SQL store so every server
// behind a load balancer counts the same attempts.

import { sql } from "kysely";
import { type Store, isPostgres } from "./db.js";

/** How long a failed login counts against its username (CONTRACT §8: 15 minutes). */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export async function recordLoginFailure(db: Store, id: bigint, username: string, nowMs: number): Promise<void> {
  await db.insertInto("login_failures").values({ id, username, failed_at: nowMs }).execute();
}

/**
 * Records an attempt as a failure before its password is checked, unless the window already holds
 * `limit` failures: then nothing is recorded and those failures are returned (for Retry-After).
 * Count and insert are one step per username (a transaction, and on PostgreSQL a lock on the
 * name), so a burst of concurrent attempts cannot all pass one count: 20 at once all had their
 * password checked against a limit of 10.
 */
export async function reserveLoginAttempt(db: Store, attempt: { id: bigint; username: string; nowMs: number; sinceMs: number; limit: number }): Promise<number[] | null> {
  return db.transaction().execute(async (tx) => {
    if (isPostgres(tx)) await sql`SELECT pg_advisory_xact_lock(hashtext(${`login:${attempt.username}`}))`.execute(tx);
    const failures = await recentLoginFailures(tx, attempt.username, attempt.sinceMs, attempt.limit);
    if (failures.length >= attempt.limit) return failures;
    await recordLoginFailure(tx, attempt.id, attempt.username, attempt.nowMs);
    return null;
  });
}

/** The failures for `username` since `sinceMs`, oldest first (at most `limit`). */
export async function recentLoginFailures(db: Store, username: string, sinceMs: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom("login_failures")
    .select("failed_at")
    .where("username", "=", username)
    .where("failed_at", ">", BigInt(sinceMs))
    .orderBy("failed_at")
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.failed_at));
}

/** A successful login starts the count again; old entries of anyone go too. */
export async function clearLoginFailures(db: Store, username: string, olderThanMs: number): Promise<void> {
  await db.deleteFrom("login_failures").where((eb) => eb.or([eb("username", "=", username), eb("failed_at", "<=", BigInt(olderThanMs))])).execute();
}

/** Failures that count no more, of every username (retention: guessed usernames never log in). */
export async function deleteLoginFailuresBefore(db: Store, cutoffMs: number): Promise<void> {
  await db.deleteFrom("login_failures").where("failed_at", "<=", BigInt(cutoffMs)).execute();
}
