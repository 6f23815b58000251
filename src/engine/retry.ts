// Retry policy: exponential backoff with jitter (pure, so it is unit-tested beside).

/** Delay before retry number `failedAttempt` (1 = after the first failure). `random` is in [0, 1). */
export function backoffDelayMs(failedAttempt: number, baseMs: number, random: number, capMs = 10 * 60_000): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.max(0, failedAttempt - 1));
  // "Equal jitter": half fixed, half random, so retries of many tasks spread out but never collapse to 0.
  return Math.round(exponential / 2 + (exponential / 2) * random);
}

export interface RetryDecision {
  /** When to run the next attempt, or null when the task has failed for good. */
  retryAtMs: number | null;
  delayMs: number;
}

/**
 * What follows a failed attempt (the runner's failures and the reaper's lost workers alike): another
 * attempt after the backoff while attempts remain and the failure allows one, else the end.
 */
export function decideRetry(f: { attempt: number; maxAttempts: number; backoffMs: number; retryable: boolean; nowMs: number; random: number }): RetryDecision {
  if (!f.retryable || f.attempt >= f.maxAttempts) return { retryAtMs: null, delayMs: 0 };
  const delayMs = backoffDelayMs(f.attempt, f.backoffMs, f.random);
  return { retryAtMs: f.nowMs + delayMs, delayMs };
}

/** Where a task stands after a failed attempt: PENDING on its next attempt, or FAILED on this one. */
export function stateAfterFailure(decision: RetryDecision, attempt: number): { status: "PENDING" | "FAILED"; attempt: number } {
  return decision.retryAtMs === null ? { status: "FAILED", attempt } : { status: "PENDING", attempt: attempt + 1 };
}
