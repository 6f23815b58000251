import { describe, expect, it } from "vitest";
import { job, task } from "./index.js";

describe("task and job options", () => {
  it("refuses unknown options, fractional retries and timeouts a timer cannot hold", () => {
    // Module code is not type-checked at load: a typo was accepted and ignored.
    expect(() => task("opts_typo", async () => 1, { retry: 3 } as never)).toThrow(/task "opts_typo": unknown option retry \(options are retries, backoff_s, timeout_s, concurrency\)/);
    expect(() => job("opts_job_typo", async () => 1, { timeout: 5 } as never)).toThrow(/unknown option timeout \(options are .*schema\)/);
    expect(() => task("opts_fraction", async () => 1, { retries: 1.5 })).toThrow(/retries must be a whole number from 0 to 1000/);
    // 3e6 s overflowed Node's timer: the task "timed out" after 1 ms.
    expect(() => task("opts_long", async () => 1, { timeout_s: 3e6 })).toThrow(/timeout_s must be a number from 0.001 to 2147483/);
    expect(task("opts_longest", async () => 1, { timeout_s: 2147483, retries: 2 }).options).toMatchObject({ timeout_s: 2147483, retries: 2 });
  });
});
