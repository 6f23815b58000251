import { describe, expect, it } from "vitest";
import { type Execution, executions } from "../src/engine/execution.js";
import { job, task } from "../src/sdk/index.js";

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

  it("says a task defined inside a job's function must be defined at its module's top level", () => {
    // Defined while a job runs, it is defined again at the next run on the same thread.
    const define = () => task("defined_inside", async () => 1);
    const running = {} as Execution;
    executions.run(running, define);
    expect(() => executions.run(running, define)).toThrow(/task "defined_inside" of .* is defined again while a job runs: define tasks at the top level of their module/);
  });

  // Found by trying the product: the name's line break cut the load failure's message there.
  it("quotes a refused name as JSON, control characters and line breaks escaped", () => {
    expect(() => job("bell\u0007\nnewline", async () => 1)).toThrow('job name "bell\\u0007\\nnewline" must match');
    expect(() => task("tab\tname", async () => 1)).toThrow('task name "tab\\tname" must match');
  });
});
