// Jobs the benchmarks run.
import { appendFileSync } from "node:fs";
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

/**
 * Appends "<i> <attempt>" to `file` after a pause of up to `maxMs`: an effect to count. Retried
 * (quickly) when its worker is lost, like any task that must survive a crash.
 */
export const appendAfterPause = task(
  "append_after_pause",
  async ({ file, i, maxMs }: { file: string; i: number; maxMs: number }, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * maxMs));
    appendFileSync(file, `${i} ${ctx.attempt}\n`);
    return i;
  },
  { retries: 3, backoff_s: 0.05 },
);

/** `n` tasks each appending one line (the reliability campaign's job). */
export const appendMany = job(
  "append_many",
  async ({ file, n, maxMs }: { file: string; n: number; maxMs: number }) => {
    for (let i = 0; i < n; i++) appendAfterPause({ file, i, maxMs });
    return n;
  },
  { retries: 3, backoff_s: 0.05 },
);
