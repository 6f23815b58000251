import { describe, expect, it } from "vitest";
import { backoffDelayMs, decideRetry, stateAfterFailure } from "./retry.js";

describe("backoffDelayMs", () => {
  it("doubles per attempt within [half, full] of the exponential delay", () => {
    expect(backoffDelayMs(1, 1000, 0)).toBe(500);
    expect(backoffDelayMs(1, 1000, 0.999)).toBeLessThanOrEqual(1000);
    expect(backoffDelayMs(2, 1000, 0)).toBe(1000);
    expect(backoffDelayMs(3, 1000, 1)).toBe(4000);
  });

  it("is capped", () => {
    expect(backoffDelayMs(40, 1000, 1, 60_000)).toBe(60_000);
  });
});

describe("decideRetry", () => {
  const failure = { attempt: 1, maxAttempts: 3, backoffMs: 1000, retryable: true, nowMs: 10_000, random: 0 };

  it("retries after the backoff while attempts remain", () => {
    expect(decideRetry(failure)).toEqual({ retryAtMs: 10_500, delayMs: 500 });
    expect(decideRetry({ ...failure, attempt: 2 })).toEqual({ retryAtMs: 11_000, delayMs: 1000 });
  });

  it("ends on the last attempt, and at once for a non-retryable failure", () => {
    expect(decideRetry({ ...failure, attempt: 3 }).retryAtMs).toBeNull();
    expect(decideRetry({ ...failure, retryable: false }).retryAtMs).toBeNull();
    expect(decideRetry({ ...failure, maxAttempts: 1 }).retryAtMs).toBeNull();
  });
});

describe("stateAfterFailure", () => {
  it("names the next attempt of a retry and the last attempt of a failure", () => {
    expect(stateAfterFailure({ retryAtMs: 10_500, delayMs: 500 }, 1)).toEqual({ status: "PENDING", attempt: 2 });
    expect(stateAfterFailure({ retryAtMs: null, delayMs: 0 }, 3)).toEqual({ status: "FAILED", attempt: 3 });
  });
});
