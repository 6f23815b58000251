import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "./retry.js";

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
