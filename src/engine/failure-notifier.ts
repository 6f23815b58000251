// Delivers the failure notices the outbox holds (store/failure-notifications.ts): a POST of the
// failed run's JobView, plus a one-line `text` that Slack-style incoming webhooks display, to the
// registration's on_failure URL. Its own loop beside the background loop's, so a slow receiver
// delays nothing else; retried with exponential backoff, at most MAX_ATTEMPTS times, then dropped
// with a warning. Several background processes share the outbox: each notice is taken by one.

import { FailureStreak } from "../core/failure-streak.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/log.js";
import type { Store } from "../store/db.js";
import { forgetNotification, retryNotificationAt, takeDueNotifications } from "../store/failure-notifications.js";

export const MAX_ATTEMPTS = 8;
const TIMEOUT_MS = 5_000;
/** How long a taken notice is left to its taker before another process may try it. */
const LEASE_MS = 60_000;
const BATCH = 20;

/** Delay before attempt `attempts + 1`: 1 s, 2 s, 4 s, … up to 5 minutes. */
export const retryDelayMs = (attempts: number): number => Math.min(300_000, 1_000 * 2 ** (attempts - 1));

export interface FailureNotifierDeps {
  db: Store;
  clock: Clock;
  log: Logger;
  /** The failed run as its webhook receives it (the JobView); null when the job is gone. */
  describeJob(jobId: bigint): Promise<{ name: string; status: string; error: string | null } | null>;
}

/** Sends what is due now; resolves when each has been answered or has failed. Returns how many were sent. */
export async function deliverDueNotifications(deps: FailureNotifierDeps): Promise<number> {
  const now = deps.clock.now();
  const due = await takeDueNotifications(deps.db, now, now + LEASE_MS, BATCH);
  let sent = 0;
  await Promise.all(
    due.map(async (notice) => {
      const job = await deps.describeJob(notice.job_id);
      if (!job) return forgetNotification(deps.db, notice.job_id);
      const text = `jobhouse: job ${job.name} (${notice.job_id}) ${job.status}${job.error ? `: ${job.error}` : ""}`;
      const failure = await post(notice.url, { ...job, text });
      if (failure === null) {
        sent += 1;
        return forgetNotification(deps.db, notice.job_id);
      }
      if (notice.attempts >= MAX_ATTEMPTS) {
        deps.log.warn(`job ${notice.job_id}: failure webhook dropped after ${notice.attempts} attempts (${failure})`, { job_id: notice.job_id });
        return forgetNotification(deps.db, notice.job_id);
      }
      await retryNotificationAt(deps.db, notice.job_id, deps.clock.now() + retryDelayMs(notice.attempts));
    }),
  );
  return sent;
}

/** null when the receiver accepted it (2xx), else why not. */
async function post(url: string, body: unknown): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "jobhouse-webhook" },
      body: JSON.stringify(body),
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? null : `HTTP ${response.status}`;
  } catch (error) {
    return (error as Error).message;
  }
}

export interface FailureNotifier {
  stop(): Promise<void>;
}

export function startFailureNotifier(deps: FailureNotifierDeps, intervalMs = 1_000): FailureNotifier {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  // What fails here is reading or updating the notices (a receiver's refusal is handled per notice).
  const failures = new FailureStreak(deps.log, "failure webhooks: the look for due notices");
  const tick = () =>
    deliverDueNotifications(deps).then(
      () => failures.succeeded(),
      (error: unknown) => failures.failed(error),
    );
  const timer = setInterval(() => {
    if (!stopped) current = current.then(tick);
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
