// The failure_notifications outbox: webhooks owed for failed runs of registrations with on_failure.

import { sql } from "kysely";
import type { Store } from "./db.js";

/** The outbox's bound: a webhook that stays down cannot grow it without limit. */
export const MAX_PENDING_NOTICES = 10_000;

export interface FailureNotificationRow {
  job_id: bigint;
  url: string;
  attempts: number;
}

/**
 * Owes a notice for `jobId` when its registration names a webhook. Runs in the transaction that
 * failed the job, so the notice exists exactly when the failure does. The outbox holds at most
 * `maxPending` notices: past that, this one is not kept (false; the caller logs it).
 */
export async function enqueueFailureNotification(tx: Store, jobId: bigint, nowMs: number, maxPending: number): Promise<"queued" | "none" | "full"> {
  const target = await tx
    .selectFrom("jobs")
    .innerJoin("registered_jobs", "registered_jobs.name", "jobs.registered_name")
    .select("registered_jobs.on_failure")
    .where("jobs.id", "=", jobId)
    .executeTakeFirst();
  if (!target?.on_failure) return "none";
  const pending = await tx.selectFrom("failure_notifications").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
  if (Number(pending.n) >= maxPending) return "full";
  await tx.insertInto("failure_notifications").values({ job_id: jobId, url: target.on_failure, attempts: 0, next_attempt_at: nowMs, created_at: nowMs }).onConflict((oc) => oc.doNothing()).execute();
  return "queued";
}

/**
 * Takes up to `limit` due notices for one delivery attempt each: their next attempt moves to
 * `leaseUntilMs`, so another background process does not send them meanwhile.
 */
export async function takeDueNotifications(db: Store, nowMs: number, leaseUntilMs: number, limit: number): Promise<FailureNotificationRow[]> {
  const due = await db.selectFrom("failure_notifications").select(["job_id", "next_attempt_at"]).where("next_attempt_at", "<=", BigInt(nowMs)).orderBy("next_attempt_at").limit(limit).execute();
  const taken: FailureNotificationRow[] = [];
  for (const row of due) {
    // Compare-and-set on the due time: of two processes, one takes it.
    const { rows } = await sql<FailureNotificationRow>`
      UPDATE failure_notifications SET next_attempt_at = ${leaseUntilMs}, attempts = attempts + 1
      WHERE job_id = ${row.job_id} AND next_attempt_at = ${row.next_attempt_at}
      RETURNING job_id, url, attempts`.execute(db);
    if (rows[0]) taken.push({ ...rows[0], attempts: Number(rows[0].attempts) });
  }
  return taken;
}

export async function retryNotificationAt(db: Store, jobId: bigint, atMs: number): Promise<void> {
  await db.updateTable("failure_notifications").set({ next_attempt_at: atMs }).where("job_id", "=", jobId).execute();
}

export async function forgetNotification(db: Store, jobId: bigint): Promise<void> {
  await db.deleteFrom("failure_notifications").where("job_id", "=", jobId).execute();
}
