import { describe, expect, it } from "vitest";
import { toIso } from "./clock.js";

describe("toIso", () => {
  it("writes every instant as Date's toISOString does", () => {
    const edges = [0, -1, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, -86_400_001, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_000, 8.64e15, -8.64e15, 1.5, -0.5];
    let value = 1_795_000_000_000;
    const spread = Array.from({ length: 20_000 }, () => (value += 7_919 * 3_617 + 13));
    for (const ms of [...edges, ...spread]) expect(toIso(ms)).toBe(new Date(ms).toISOString());
    expect(toIso(1_795_000_000_123n)).toBe("2026-11-18T11:06:40.123Z");
    expect(toIso(null)).toBeNull();
  });

  it("refuses what Date refuses", () => {
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
    expect(() => toIso(8.64e15 + 1)).toThrow(RangeError);
  });
});
