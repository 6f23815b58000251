// Relative times that stay current, with the exact time on hover and for assistive technology.

import { useEffect, useState } from "react";
import { exactTime, relativeTime } from "../lib/format.js";

let listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

/** One shared clock that ticks every second while anything shows a relative time. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const tick = () => setNow(Date.now());
    listeners.add(tick);
    timer ??= setInterval(() => listeners.forEach((listener) => listener()), 1000);
    return () => {
      listeners.delete(tick);
      if (listeners.size === 0 && timer !== null) {
        clearInterval(timer);
        timer = null;
        listeners = new Set();
      }
    };
  }, []);
  return now;
}

export function Time({ iso }: { iso: string | null }) {
  const now = useNow();
  if (iso === null) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={exactTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}
