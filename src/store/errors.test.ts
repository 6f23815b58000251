import { describe, expect, it } from "vitest";
import { isTransientConflict, retryOnConflict } from "./errors.js";

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
