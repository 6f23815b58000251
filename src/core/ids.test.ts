import { describe, expect, it } from "vitest";
import { ManualClock } from "./clock.js";
import { createIdGenerator, idTimestampMs, SNOWFLAKE_EPOCH_MS } from "./ids.js";

describe("snowflake ids", () => {
  it("encodes time, node and sequence, strictly increasing", () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22));
    const ids = createIdGenerator(5, clock);
    const a = ids.next();
    const b = ids.next();
    expect(b).toBeGreaterThan(a);
    expect(idTimestampMs(a)).toBe(Date.UTC(2026, 10, 22));
    expect(Number((a >> 12n) & 1023n)).toBe(5);
    expect(Number(b & 4095n)).toBe(1);
  });

  it("borrows the next millisecond when 4096 ids are taken in one", () => {
    const clock = new ManualClock(SNOWFLAKE_EPOCH_MS + 1000);
    const ids = createIdGenerator(1, clock);
    const all = Array.from({ length: 5000 }, () => ids.next());
    expect(new Set(all).size).toBe(5000);
    for (let i = 1; i < all.length; i++) expect(all[i]! > all[i - 1]!).toBe(true);
  });

  it("never goes backwards when the clock does", () => {
    const clock = new ManualClock(SNOWFLAKE_EPOCH_MS + 50_000);
    const ids = createIdGenerator(1, clock);
    const a = ids.next();
    clock.advance(-10_000);
    expect(ids.next()).toBeGreaterThan(a);
  });

  it("rejects a node outside 0..1023", () => {
    expect(() => createIdGenerator(1024, new ManualClock(0))).toThrow(RangeError);
  });
});
