// Fan-out / fan-in: count the primes below a limit by splitting the range into chunks, counting
// each chunk in its own task, and summing. Run it:
//   npx jobhouse run-job examples/primes.ts:countPrimes --kwargs '{"limit": 2000000, "chunks": 16}' --wait

import { job, task, z } from "jobhouse";

export const splitRange = task("split_range", async ({ limit, chunks }: { limit: number; chunks: number }) => {
  const size = Math.ceil(limit / chunks);
  return Array.from({ length: chunks }, (_, i) => ({ from: i * size, to: Math.min(limit, (i + 1) * size) }));
});

export const countChunk = task(
  "count_chunk",
  async ({ from, to }: { from: number; to: number }, ctx) => {
    let count = 0;
    for (let n = Math.max(2, from); n < to; n++) {
      // Task code runs in a worker thread, so a long loop never holds up the API; yielding now and
      // then lets it notice cancellation (ctx.signal) between chunks of work.
      if (n % 20_000 === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        ctx.signal.throwIfAborted();
      }
      let prime = true;
      for (let d = 2; d * d <= n; d++) {
        if (n % d === 0) {
          prime = false;
          break;
        }
      }
      if (prime) count++;
    }
    ctx.log.info(`${count} primes in [${from}, ${to})`);
    return count;
  },
  { retries: 1 },
);

export const total = task("total", async ({ counts }: { counts: number[] }) => counts.reduce((sum, c) => sum + c, 0));

export const countPrimes = job(
  "primes",
  async ({ limit, chunks }: { limit: number; chunks: number }) => {
    // The chunk list is another task's result: map fans out over it once it is known.
    const ranges = splitRange({ limit, chunks });
    return total({ counts: countChunk.map(ranges) });
  },
  { schema: z.object({ limit: z.number().int().min(10).max(50_000_000).default(200_000), chunks: z.number().int().min(1).max(256).default(8) }) },
);
