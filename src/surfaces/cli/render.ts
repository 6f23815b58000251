// Human-readable output: tables for lists, labelled fields for details, one line for mutations.

const MAX_CELL = 60;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  const line = text.replace(/\s+/g, " ");
  return line.length > MAX_CELL ? line.slice(0, MAX_CELL - 1) + "…" : line;
}

export function renderTable(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return "(none)";
  const cols = columns ?? Object.keys(rows[0]!).filter((k) => rows.some((r) => typeof r[k] !== "object" || r[k] === null));
  const cells = rows.map((row) => cols.map((c) => cell(row[c])));
  const header = cols.map((c) => c.toUpperCase());
  const widths = cols.map((_, i) => Math.max(header[i]!.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...cells.map(line)].join("\n");
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isTable = (v: unknown): v is Record<string, unknown>[] => Array.isArray(v) && v.length > 0 && isRecord(v[0]);

/** Labelled fields; nested objects become dotted labels, lists of objects become tables below. */
export function renderDetail(value: Record<string, unknown>): string {
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
  const lines = fields.map(([k, v]) => `${(k + ":").padEnd(width + 2)}${typeof v === "object" && v !== null ? JSON.stringify(v) : v ?? "-"}`);
  for (const [label, rows] of tables) lines.push("", `${label}:`, renderTable(rows).replace(/^/gm, "  "));
  return lines.join("\n");
}

function isPage(value: unknown): value is { items: Record<string, unknown>[]; total: number; next_cursor: string | null } {
  return typeof value === "object" && value !== null && Array.isArray((value as { items?: unknown }).items) && "total" in value;
}

export interface RenderHints {
  columns?: string[];
  confirm?: (output: never) => string;
}

export function renderHuman(output: unknown, hints: RenderHints): string {
  if (hints.confirm) return hints.confirm(output as never);
  if (output === undefined || output === null) return "Done";
  if (isPage(output)) {
    const footer = `${output.items.length} of ${output.total}` + (output.next_cursor ? ` (next page: --cursor ${output.next_cursor})` : "");
    return `${renderTable(output.items, hints.columns)}\n${footer}`;
  }
  if (typeof output === "object") return renderDetail(output as Record<string, unknown>);
  return String(output);
}
