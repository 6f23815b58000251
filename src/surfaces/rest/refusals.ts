// One log line per class of refused request (status and code): the first one of a minute is logged
// as it happens, the rest of that minute as one count. A scanner knocking thousands of times
// leaves two lines a minute, not thousands; a real client's mistake is still seen at once.

import type { Logger } from "../../core/log.js";

const WINDOW_MS = 60_000;

export interface RefusalLog {
  /** `detail`, when given, is said with the first of a minute (an outage's reason). */
  note(status: number, code: string, method: string, route: string, detail?: string): void;
  close(): void;
}

export function createRefusalLog(log: Logger): RefusalLog {
  const windows = new Map<string, { more: number; timer: NodeJS.Timeout }>();
  // Failed credentials and refused roles matter to whoever guards the server: warn.
  // So do the 503s of a store that does not answer.
  const level = (status: number) => (status === 401 || status === 403 || status === 429 || status === 503 ? "warn" : "info");
  return {
    note(status, code, method, route, detail) {
      const key = `${status} ${code}`;
      const open = windows.get(key);
      if (open) return void (open.more += 1);
      log[level(status)](`refused ${method} ${route}: ${status} ${code}${detail ? `: ${detail}` : ""}`, { status, code, method, route });
      const timer = setTimeout(() => {
        const closing = windows.get(key);
        windows.delete(key);
        if (closing && closing.more > 0) log[level(status)](`refused ${closing.more} more request(s) with ${status} ${code} in the last minute`, { status, code, count: closing.more });
      }, WINDOW_MS);
      timer.unref();
      windows.set(key, { more: 0, timer });
    },
    close() {
      for (const { timer } of windows.values()) clearTimeout(timer);
      windows.clear();
    },
  };
}
