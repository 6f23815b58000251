// Formatting for people: relative times (exact ones go in a title), durations, sizes, counts.

const UNITS: [limitS: number, divisorS: number, unit: string][] = [
  [60, 1, "s"],
  [3600, 60, "min"],
  [86_400, 3600, "h"],
  [Infinity, 86_400, "d"],
];

/** "12 s ago", "3 min ago", "in 2 h"; "just now" within a second. */
export function relativeTime(iso: string | null, nowMs: number): string {
  if (iso === null) return "—";
  const thenMs = Date.parse(iso);
  if (Number.isNaN(thenMs)) return iso;
  const deltaS = Math.round((nowMs - thenMs) / 1000);
  const size = Math.abs(deltaS);
  if (size < 1) return "just now";
  const [, divisor, unit] = UNITS.find(([limit]) => size < limit)!;
  const amount = Math.floor(size / divisor);
  return deltaS >= 0 ? `${amount} ${unit} ago` : `in ${amount} ${unit}`;
}

/** The exact time for a tooltip: local date and time with the zone, plus the UTC ISO form. */
export function exactTime(iso: string | null): string {
  if (iso === null) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toLocaleString(undefined, { timeZoneName: "short" })} (${iso})`;
}

/** 850 ms, 4.2 s, 3 min 05 s, 2 h 07 min. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const totalS = Math.round(s);
  if (totalS < 3600) return `${Math.floor(totalS / 60)} min ${String(totalS % 60).padStart(2, "0")} s`;
  const totalMin = Math.floor(totalS / 60);
  if (totalMin < 1440) return `${Math.floor(totalMin / 60)} h ${String(totalMin % 60).padStart(2, "0")} min`;
  return `${Math.floor(totalMin / 1440)} d ${Math.floor((totalMin % 1440) / 60)} h`;
}

/** Bytes in binary units: 0 B, 912 B, 1.5 KiB, 20 MiB. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** Milliseconds between two ISO times, or until `nowMs` while the end is still open. */
export function spanMs(startIso: string | null, endIso: string | null, nowMs: number): number | null {
  if (startIso === null) return null;
  const end = endIso === null ? nowMs : Date.parse(endIso);
  return Math.max(0, end - Date.parse(startIso));
}

/**
 * Text from outside (a task's log, error or arguments) with the characters that reorder the text
 * after them shown as `\u202e`-style escapes: "\u202eevil" showed as "live", so job code could
 * disguise what it wrote. The same set as the CLI's visibleControls (src/core/control-chars.ts).
 */
export function visibleBidi(text: string): string {
  return text.replace(/[\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A JSON value as the views show it: indented, reordering characters visible. */
export const shownJson = (value: unknown): string => visibleBidi(JSON.stringify(value, null, 2) ?? "null");

