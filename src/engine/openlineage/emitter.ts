// The emitter: a bounded queue the feed's observer fills, and the loop that builds and hands on events.

import type { Clock } from "../../core/clock.js";
import type { Change } from "../changes.js";
import { type EventBuilderDeps, type Observed, createEventBuilder } from "./events.js";
import type { LossLog } from "./loss-log.js";
import { BoundedQueue } from "./queue.js";
import type { Sink, SinkCounts } from "./sinks.js";

export const QUEUE_LIMIT = 10_000;
/** Shutdown waits at most this long for queued events to be built and delivered. */
export const FLUSH_MS = 2_000;

export interface OpenLineageEmitter {
  /** Called with every change this process publishes; returns at once. */
  observe(change: Change): void;
  /** Events sent, dropped and failed, summed over the sinks (each delivery counts once per sink). */
  counts(): SinkCounts;
  /** Flushes for at most FLUSH_MS, then stops; what is left is counted as dropped. */
  close(): Promise<void>;
}

export interface EmitterDeps extends EventBuilderDeps {
  clock: Clock;
  sinks: Sink[];
  losses: LossLog;
  queueLimit?: number;
}

/** Only these transitions start or end a run; the rest are not queued at all. */
function meansAnEvent(change: Change): boolean {
  if (change.type === "job") return change.status !== "PENDING";
  if (change.type === "task") return change.status !== "PENDING" || change.attempt > 1;
  return false;
}

/**
 * Nothing here can fail or slow a job: the observer only queues (a full queue drops and counts),
 * and the store and ClickHouse reads happen in the loop, after the commit, off the transition's
 * path; every failure is counted and logged instead of thrown.
 */
export function startEmitter(deps: EmitterDeps): OpenLineageEmitter {
  const builder = createEventBuilder(deps);
  const queue = new BoundedQueue<Observed>(deps.queueLimit ?? QUEUE_LIMIT);
  const own = { dropped: 0, failed: 0 };
  let closing = false;
  let stopped = false;
  let wake: (() => void) | undefined;
  const lose = (kind: "dropped" | "failed", n: number, reason: string) => {
    own[kind] += n;
    deps.losses.add(kind, n, "the emitter", reason);
  };

  const loop = (async () => {
    for (;;) {
      if (stopped) return;
      const item = queue.shift();
      if (item === undefined) {
        if (closing) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      try {
        const events = await builder.build(item);
        if (stopped) {
          lose("dropped", events.length, "shutting down");
          continue;
        }
        for (const event of events) {
          const line = JSON.stringify(event);
          for (const sink of deps.sinks) sink.push(line);
        }
      } catch (error) {
        if (stopped) lose("dropped", 1, "shutting down");
        else lose("failed", 1, `building the event: ${(error as Error)?.message ?? error}`);
      }
      // SQLite reads resolve without yielding: a long queue must not hold the event loop.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();

  return {
    observe(change) {
      if (closing || !meansAnEvent(change)) return;
      if (!queue.push({ change: change as Observed["change"], atMs: deps.clock.now() })) return lose("dropped", 1, "queue full");
      wake?.();
    },
    counts() {
      const total = { sent: 0, dropped: own.dropped, failed: own.failed };
      for (const sink of deps.sinks) {
        const c = sink.counts();
        total.sent += c.sent;
        total.dropped += c.dropped;
        total.failed += c.failed;
      }
      return total;
    },
    async close() {
      if (closing) return;
      closing = true;
      wake?.();
      const deadline = Date.now() + FLUSH_MS;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
      clearTimeout(timer);
      stopped = true;
      const left = queue.drain();
      if (left > 0) lose("dropped", left, "shutting down");
      await Promise.all(deps.sinks.map((sink) => sink.close(deadline)));
      deps.losses.flush();
    },
  };
}
