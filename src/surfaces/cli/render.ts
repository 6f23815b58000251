// Human-readable output: tables for lists, labelled fields for details, one line for mutations.

import { visibleControls } from "../../core/control-chars.js";

const MAX_CELL = 60;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** How tables and details are drawn (`--absolute`, `--no-headers`). */
export interface RenderOptions {
  /** Times as written (ISO 8601, UTC) instead of "3m ago". */
  absolute?: boolean;
  /** Tables without their header line (for scripts that cut columns). */
  headers?: boolean;
  /** The clock relative times count from. */
  now?: number;
  /** Every column of a list and of the tables inside a detail, not the compact set (`--wide`). */
  wide?: boolean;
  /** Statuses in colour (a terminal, and NO_COLOR unset). */
  color?: boolean;
}

// ANSI colours of the statuses: green done, red failed, blue running, grey for what did not run.
const STATUS_COLORS: Record<string, number> = { COMPLETED: 32, FAILED: 31, LOST: 31, RUNNING: 34, ACTIVE: 32, CANCELLED: 90, SKIPPED: 90, STOPPED: 90, STOPPING: 33 };
const colored = (text: string, plain: string, on: boolean | undefined) => {
  const code = on ? STATUS_COLORS[plain.trim()] : undefined;
  return code === undefined ? text : `\x1b[${code}m${text}\x1b[0m`;
};

/** "12s ago", "3m ago", "5h ago", "2d ago" (or "in 3m" for a time to come). */
export function relativeTime(atMs: number, nowMs: number): string {
  const seconds = Math.round((nowMs - atMs) / 1000);
  const size = Math.abs(seconds);
  const amount =
    size < 60 ? `${size}s` : size < 3600 ? `${Math.floor(size / 60)}m` : size < 86_400 ? `${Math.floor(size / 3600)}h` : `${Math.floor(size / 86_400)}d`;
  if (size < 1) return "just now";
  return seconds >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** "3m ago" for a timestamp the output shows relative, else undefined. */
function relativeOf(value: unknown, options: RenderOptions): string | undefined {
  if (typeof value !== "string" || options.absolute || !TIMESTAMP.test(value)) return undefined;
  return relativeTime(Date.parse(value), options.now ?? Date.now());
}

function cell(value: unknown, options: RenderOptions = {}): string {
  if (value === null || value === undefined) return "-";
  const relative = relativeOf(value, options);
  if (relative !== undefined) return relative;
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  const line = visibleControls(text.replace(/\s+/g, " "));
  return line.length > MAX_CELL ? line.slice(0, MAX_CELL - 1) + "…" : line;
}

export function renderTable(rows: Record<string, unknown>[], columns?: string[], options: RenderOptions = {}): string {
  if (rows.length === 0) return "(none)";
  const cols = columns ?? Object.keys(rows[0]!).filter((k) => rows.some((r) => typeof r[k] !== "object" || r[k] === null));
  const cells = rows.map((row) => cols.map((c) => cell(row[c], options)));
  const header = cols.map((c) => c.toUpperCase());
  const widths = cols.map((_, i) => Math.max(header[i]!.length, ...cells.map((r) => r[i]!.length)));
  // Padded as plain text, then coloured: escape codes take no room on the screen.
  const line = (values: string[], color?: boolean) => values.map((v, i) => colored(v.padEnd(widths[i]!), v, color)).join("  ").trimEnd();
  return [...(options.headers === false ? [] : [line(header)]), ...cells.map((row) => line(row, options.color))].join("\n");
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isTable = (v: unknown): v is Record<string, unknown>[] => Array.isArray(v) && v.length > 0 && isRecord(v[0]);

/** Labelled fields; nested objects become dotted labels, lists of objects become tables below. */
export function renderDetail(value: Record<string, unknown>, options: RenderOptions = {}, detailColumns: Record<string, string[]> = {}): string {
  const fields: [string, unknown][] = [];
  const tables: [string, Record<string, unknown>[]][] = [];
  const walk = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, v] of Object.entries(object)) {
      const label = prefix + key;
      if (isTable(v)) tables.push([label, v]);
      else if (isRecord(v) && Object.keys(v).length > 0 && prefix.split(".").length < 3) walk(v, label + ".");
      else fields.push([label, v]);
    }
  };
  walk(value, "");
  const width = Math.max(...fields.map(([k]) => k.length));
  // A detail keeps the exact time and adds how long ago it was.
  const shown = (v: unknown) => {
    const relative = relativeOf(v, options);
    if (relative !== undefined) return `${v} (${relative})`;
    return visibleControls(typeof v === "object" && v !== null ? JSON.stringify(v) : String(v ?? "-"));
  };
  const lines = fields.map(([k, v]) => `${(k + ":").padEnd(width + 2)}${colored(String(shown(v)), String(v), options.color && k === "status")}`);
  for (const [label, rows] of tables) {
    const columns = options.wide ? undefined : detailColumns[label];
    lines.push("", `${label}:`, renderTable(rows, columns, options).replace(/^/gm, "  "));
    // A table that is one page of more (a job's tasks): said under it, as a list's footer says it.
    const next = value[`${label}_next_cursor`];
    if (typeof next === "string" && options.headers !== false) lines.push(`  ${rows.length} of ${String(value[`total_${label}`] ?? "more")} ${label} (next page: --${label}-cursor ${next})`);
  }
  return lines.join("\n");
}

function isPage(value: unknown): value is { items: Record<string, unknown>[]; total: number; next_cursor: string | null } {
  return typeof value === "object" && value !== null && Array.isArray((value as { items?: unknown }).items) && "total" in value;
}

export interface RenderHints {
  columns?: string[];
  detailColumns?: Record<string, string[]>;
  confirm?: (output: never) => string;
}

export function renderHuman(output: unknown, hints: RenderHints, options: RenderOptions = {}): string {
  if (hints.confirm) return hints.confirm(output as never);
  if (output === undefined || output === null) return "Done";
  if (isPage(output)) {
    // `--output wide`: every column, as in a detail's tables (a list showed its compact set still).
    const table = renderTable(output.items, options.wide ? undefined : hints.columns, options);
    // Without headers the output is rows only: a script reads every line as one.
    if (options.headers === false) return output.items.length === 0 ? "" : table;
    const footer = `${output.items.length} of ${output.total}` + (output.next_cursor ? ` (next page: --cursor ${output.next_cursor})` : "");
    return `${table}\n${footer}`;
  }
  if (typeof output === "object") return renderDetail(output as Record<string, unknown>, options, hints.detailColumns);
  return visibleControls(String(output));
}
