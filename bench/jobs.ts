// Jobs the benchmarks run.
import { job, task } from "jobhouse";

export const noop = task("noop", async () => null);

/** Fans out `n` no-op tasks from the entry task. */
export const fanOutNoop = job("fan_out_noop", async ({ n }: { n: number }) => {
  for (let i = 0; i < n; i++) noop({ i });
  return n;
});

/** A chain of `n` no-op tasks, each depending on the one before: every task waits on nothing but dispatch. */
export const chainNoop = job("chain_noop", async ({ n }: { n: number }) => {
  let previous: unknown = null;
  for (let i = 0; i < n; i++) previous = noop({ i, previous });
  return previous;
});
