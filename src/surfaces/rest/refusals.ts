// One log line per class of refused request (status and code): the first one of a minute is logged
// as it happens, the rest of that minute as one count. A scanner knocking thousands of times
// leaves two lines a minute, not thousands; a real client's mistake is still seen at once.

import type { Logger } from "../../core/log.js";

const WINDOW_MS = 60_000;

export interface RefusalLog {
  note(status: number, code: string, method: string, route: string): void;
  close(): void;
}

export function createRefusalLog(log: Logger): RefusalLog {
  const windows = new Map<string, { more: number; timer: NodeJS.Timeout }>();
  // Failed credentials and refused roles matter to whoever guards the server: warn.
  const level = (status: number) => (status === 401 || status === 403 || status === 429 ? "warn" : "info");
  return {
    note(status, code, method, route) {
      const key = `${status} ${code}`;
      const open = windows.get(key);
      if (open) return void (open.more += 1);
      log[level(status)](`refused ${method} ${route}: ${status} ${code}`, { status, code, method, route });
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
