// Where events go, each sink in its own delivery loop: an HTTP endpoint (Marquez) or a JSON-lines file.

import { appendFile } from "node:fs/promises";
import { BoundedQueue } from "./queue.js";

export const SINK_QUEUE_LIMIT = 10_000;
export const MAX_ATTEMPTS = 5;
/** Waits before attempts 2…5: 200 ms, 400 ms, 800 ms, 1.6 s. */
export const retryDelayMs = (failedAttempts: number): number => 200 * 2 ** (failedAttempts - 1);
/** A receiver that never answers only delays delivery: each request gives up after this. */
export const REQUEST_TIMEOUT_MS = 5_000;

/** One way out for a serialized event; rejects with the reason it was not accepted. */
export interface Transport {
  readonly label: string;
  send(line: string, signal: AbortSignal): Promise<void>;
}

export function httpTransport(url: string, token: string | null): Transport {
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "jobhouse-openlineage" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return {
    label: new URL(url).origin,
    async send(line, signal) {
      const response = await fetch(url, {
        method: "POST",
        headers,
        body: line,
        redirect: "error",
        signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
    },
  };
}

export function fileTransport(path: string): Transport {
  return {
    label: path,
    // One write per line with O_APPEND: processes sharing the file never interleave within a line.
    send: (line) => appendFile(path, line + "\n", { mode: 0o600 }),
  };
}

export interface SinkCounts {
  sent: number;
  dropped: number;
  failed: number;
}

export interface Sink {
  readonly label: string;
  /** Never waits: queues the event, or drops and counts it when the queue is full. */
  push(line: string): void;
  /** Resolves when everything queued was delivered or given up, or at `deadlineMs`; then stops. */
  close(deadlineMs: number): Promise<void>;
  counts(): SinkCounts;
}

export interface SinkOptions {
  queueLimit?: number;
  /** Told of undelivered events (dropped or failed), to be counted and logged. */
  onLoss(kind: "dropped" | "failed", count: number, label: string, reason: string): void;
}

/**
 * Delivers in order from its own bounded queue, one event at a time: a failure is retried with
 * exponential backoff up to MAX_ATTEMPTS, then counted as failed; a full queue refuses (drops and
 * counts) the newest, so a slow receiver costs memory up to the bound and nothing else.
 */
export function startSink(transport: Transport, options: SinkOptions): Sink {
  const queue = new BoundedQueue<string>(options.queueLimit ?? SINK_QUEUE_LIMIT);
  const counts: SinkCounts = { sent: 0, dropped: 0, failed: 0 };
  const stop = new AbortController();
  let closing = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      stop.signal.addEventListener("abort", done, { once: true });
    });
  const lose = (kind: "dropped" | "failed", reason: string, n = 1) => {
    counts[kind] += n;
    options.onLoss(kind, n, transport.label, reason);
  };

  async function deliver(line: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await transport.send(line, stop.signal);
        counts.sent += 1;
        return;
      } catch (error) {
        if (stop.signal.aborted) return lose("dropped", "shutting down");
        if (attempt >= MAX_ATTEMPTS) return lose("failed", reasonOf(error));
        await sleep(retryDelayMs(attempt));
        if (stop.signal.aborted) return lose("dropped", "shutting down");
      }
    }
  }

  const loop = (async () => {
    for (;;) {
      // Past the deadline nothing more is tried: what is left is counted by close().
      if (stop.signal.aborted) return;
      const line = queue.shift();
      if (line !== undefined) {
        await deliver(line);
        continue;
      }
      if (closing) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  })();

  return {
    label: transport.label,
    push(line) {
      if (closing || !queue.push(line)) return lose("dropped", closing ? "shutting down" : "queue full");
      wake?.();
    },
    async close(deadlineMs) {
      closing = true;
      wake?.();
      const timer = setTimeout(() => stop.abort(), Math.max(0, deadlineMs - Date.now()));
      await loop;
      clearTimeout(timer);
      // What the deadline left in the queue is lost with the process.
      const left = queue.drain();
      if (left > 0) lose("dropped", "shutting down", left);
    },
    counts: () => ({ ...counts }),
  };
}

/** fetch says only "fetch failed": the cause's code (ECONNREFUSED, …) is the useful part. */
function reasonOf(error: unknown): string {
  const e = error as Error & { cause?: { code?: string } };
  return e?.cause?.code ?? e?.message ?? String(error);
}
