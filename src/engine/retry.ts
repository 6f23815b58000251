// Retry policy: exponential backoff with jitter (pure, so it is unit-tested beside).

/** Delay before retry number `failedAttempt` (1 = after the first failure). `random` is in [0, 1). */
export function backoffDelayMs(failedAttempt: number, baseMs: number, random: number, capMs = 10 * 60_000): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.max(0, failedAttempt - 1));
  // "Equal jitter": half fixed, half random, so retries of many tasks spread out but never collapse to 0.
  return Math.round(exponential / 2 + (exponential / 2) * random);
}
