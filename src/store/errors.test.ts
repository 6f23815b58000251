import { describe, expect, it } from "vitest";
import { isTransientConflict, recordThroughOutage, retryOnConflict } from "./errors.js";

const failure = (code: string) => Object.assign(new Error(code), { code });

describe("retryOnConflict", () => {
  it("runs a statement the database rolled back for a conflict again", async () => {
    let calls = 0;
    const result = await retryOnConflict(async () => {
      calls += 1;
      if (calls < 3) throw failure(calls === 1 ? "40P01" : "40001");
      return "recorded";
    });
    expect(result).toBe("recorded");
    expect(calls).toBe(3);
  });

  it("gives up after its attempts, and never repeats any other error", async () => {
    let calls = 0;
    await expect(retryOnConflict(async () => { calls += 1; throw failure("40P01"); }, 3)).rejects.toThrow("40P01");
    expect(calls).toBe(3);
    calls = 0;
    await expect(retryOnConflict(async () => { calls += 1; throw failure("23505"); })).rejects.toThrow("23505");
    expect(calls).toBe(1);
  });

  it("knows PostgreSQL's and SQLite's conflicts", () => {
    expect(["40P01", "40001", "SQLITE_BUSY"].every((code) => isTransientConflict(failure(code)))).toBe(true);
    expect(isTransientConflict(failure("57P01"))).toBe(false);
    expect(isTransientConflict(null)).toBe(false);
  });
});

describe("recordThroughOutage", () => {
  // Found by trying the product: a completion whose connection was terminated was recorded as the
  // task's failure ("Connection terminated unexpectedly"), losing what it had done.
  it("records again through a dropped or refused connection, telling the record an earlier try may have committed", async () => {
    const seen: boolean[] = [];
    const result = await recordThroughOutage(async (interrupted) => {
      seen.push(interrupted);
      if (seen.length === 1) throw new Error("Connection terminated unexpectedly");
      if (seen.length === 2) throw failure("ECONNREFUSED");
      if (seen.length === 3) throw failure("40P01");
      // What a transaction's rollback says once pg's connection broke mid-transaction.
      if (seen.length === 4) throw new Error("Client has encountered a connection error and is not queryable");
      return "recorded";
    });
    expect(result).toBe("recorded");
    expect(seen).toEqual([false, true, true, true, true]);
  });

  it("gives up after its patience, and never repeats a failed statement", async () => {
    let calls = 0;
    await expect(recordThroughOutage(async () => { calls += 1; throw failure("ECONNREFUSED"); }, 250)).rejects.toThrow("ECONNREFUSED");
    expect(calls).toBeGreaterThan(1);
    calls = 0;
    await expect(recordThroughOutage(async () => { calls += 1; throw failure("23505"); })).rejects.toThrow("23505");
    expect(calls).toBe(1);
  });
});
