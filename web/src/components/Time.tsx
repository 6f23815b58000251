// Relative times that stay current, with the exact time on hover and for assistive technology.

import { useEffect, useState } from "react";
import { exactTime, formatDuration, relativeTime, spanMs } from "../lib/format.js";

const listeners = new Set<(now: number) => void>();
let timer: ReturnType<typeof setInterval> | null = null;

/**
 * One shared clock that ticks every second while anything shows a live time. A component re-renders
 * only when the time it shows can change: every `stepMs` counted from `fromMs`, the instant it shows
 * (a time an hour old needs no second ticks, and a table of 1,000 rows must not re-render each
 * second). Counted from the wall clock's own minutes, "1 min ago" stayed up to a minute late.
 */
export function useNow(stepMs = 1000, fromMs = 0): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const step = (at: number) => Math.floor((at - fromMs) / stepMs);
    const tick = (next: number) => setNow((shown) => (step(next) === step(shown) ? shown : next));
    listeners.add(tick);
    timer ??= setInterval(() => {
      const next = Date.now();
      listeners.forEach((listener) => listener(next));
    }, 1000);
    return () => {
      listeners.delete(tick);
      if (listeners.size === 0 && timer !== null) {
        clearInterval(timer);
        timer = null;
      }
    };
  }, [stepMs, fromMs]);
  return now;
}

/** How often a relative time of this age changes its text. */
function stepFor(iso: string): number {
  const ageMs = Math.abs(Date.now() - Date.parse(iso));
  return ageMs < 60_000 ? 1000 : ageMs < 3_600_000 ? 60_000 : 3_600_000;
}

export function Time({ iso }: { iso: string | null }) {
  if (iso === null) return <span className="muted">—</span>;
  return <RelativeTime iso={iso} />;
}

function RelativeTime({ iso }: { iso: string }) {
  const now = useNow(stepFor(iso), Date.parse(iso));
  return (
    <time dateTime={iso} title={exactTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

/** The time from start to end; while the end is open it counts up each second (only then does it tick). */
export function Elapsed({ start, end }: { start: string | null; end: string | null }) {
  if (start === null) return <>—</>;
  if (end !== null) return <>{formatDuration(spanMs(start, end, 0))}</>;
  return <LiveElapsed start={start} />;
}

function LiveElapsed({ start }: { start: string }) {
  const now = useNow();
  return <>{formatDuration(spanMs(start, null, now))}</>;
}
