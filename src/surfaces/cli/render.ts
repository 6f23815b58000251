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

export function renderDetail(value: Record<string, unknown>): string {
  const scalars = Object.entries(value).filter(([, v]) => !Array.isArray(v) || v.length === 0 || typeof v[0] !== "object");
  const width = Math.max(...scalars.map(([k]) => k.length));
  const lines = scalars.map(([k, v]) => `${(k + ":").padEnd(width + 2)}${typeof v === "object" && v !== null ? JSON.stringify(v) : v ?? "-"}`);
  for (const [key, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.length > 0 && typeof v[0] === "object") {
      lines.push("", `${key}:`, renderTable(v as Record<string, unknown>[]).replace(/^/gm, "  "));
    }
  }
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
