// Lost events (dropped or given up) logged at most once a minute with counts, not once per event.

import type { Logger } from "../../core/log.js";

export const LOSS_LOG_INTERVAL_MS = 60_000;

export interface LossLog {
  add(kind: "dropped" | "failed", count: number, where: string, reason: string): void;
  /** Logs what is still untold (at shutdown) and stops the timer. */
  flush(): void;
}

export function createLossLog(log: Logger, intervalMs = LOSS_LOG_INTERVAL_MS): LossLog {
  const pending = new Map<string, number>();
  let lastLoggedAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return;
    const parts = [...pending].map(([what, n]) => `${n} ${what}`);
    pending.clear();
    lastLoggedAt = Date.now();
    log.warn(`openlineage: events not delivered: ${parts.join("; ")}`);
  };

  return {
    add(kind, count, where, reason) {
      const what = kind === "dropped" ? `dropped at ${where} (${reason})` : `failed at ${where} (${reason})`;
      pending.set(what, (pending.get(what) ?? 0) + count);
      const wait = lastLoggedAt + intervalMs - Date.now();
      if (wait <= 0) return flush();
      if (!timer) {
        timer = setTimeout(flush, wait);
        timer.unref();
      }
    },
    flush,
  };
}
