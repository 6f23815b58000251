import { describe, expect, it } from "vitest";
import { relativeTime, renderHuman } from "./render.js";

const NOW = Date.parse("2026-11-23T10:00:00.000Z");

describe("human output", () => {
  it("says how long ago a time was, or how soon it comes", () => {
    expect(relativeTime(NOW, NOW)).toBe("just now");
    expect(relativeTime(NOW - 12_000, NOW)).toBe("12s ago");
    expect(relativeTime(NOW - 3 * 60_000 - 5_000, NOW)).toBe("3m ago");
    expect(relativeTime(NOW - 5 * 3_600_000, NOW)).toBe("5h ago");
    expect(relativeTime(NOW - 2 * 86_400_000, NOW)).toBe("2d ago");
    expect(relativeTime(NOW + 3 * 60_000, NOW)).toBe("in 3m");
  });

  const page = { items: [{ id: "7", name: "etl", created_at: "2026-11-23T09:57:00.000Z" }], total: 1, next_cursor: null };

  it("draws tables with relative times, exact ones with --absolute, no header or footer with --no-headers", () => {
    expect(renderHuman(page, {}, { now: NOW })).toBe("ID  NAME  CREATED_AT\n7   etl   3m ago\n1 of 1");
    expect(renderHuman(page, {}, { now: NOW, absolute: true })).toBe("ID  NAME  CREATED_AT\n7   etl   2026-11-23T09:57:00.000Z\n1 of 1");
    expect(renderHuman(page, {}, { now: NOW, headers: false })).toBe("7   etl   3m ago");
    expect(renderHuman({ items: [], total: 0, next_cursor: null }, {}, { headers: false })).toBe("");
  });

  it("shows control characters of outside text as escapes, in tables and details", () => {
    const error = "\u001b[2J\u001b]0;pwned\u0007 boom";
    const table = renderHuman({ items: [{ id: "1", error }], total: 1, next_cursor: null }, { columns: ["id", "error"] });
    expect(table.includes("\u001b") || table.includes("\u0007")).toBe(false);
    expect(table).toContain("\\x1b[2J\\x1b]0;pwned\\x07 boom");
    const detail = renderHuman({ id: "1", error }, {});
    expect(detail.includes("\u001b") || detail.includes("\u0007")).toBe(false);
    expect(detail).toContain("\\x1b[2J");
  });

  it("keeps the exact time in a detail and adds how long ago", () => {
    expect(renderHuman({ id: "7", created_at: "2026-11-23T09:57:00.000Z" }, {}, { now: NOW })).toBe("id:         7\ncreated_at: 2026-11-23T09:57:00.000Z (3m ago)");
  });
});

describe("tables inside a detail", () => {
  const job = { id: "7", tasks: [{ id: "8", name: "load", status: "COMPLETED", entrypoint: "etl.ts:load", job_id: "7" }] };
  it("show the compact columns unless --wide", () => {
    expect(renderHuman(job, { detailColumns: { tasks: ["id", "name", "status"] } })).toBe("id: 7\n\ntasks:\n  ID  NAME  STATUS\n  8   load  COMPLETED");
    expect(renderHuman(job, { detailColumns: { tasks: ["id", "name", "status"] } }, { wide: true })).toContain("ENTRYPOINT");
  });

  // Found by trying the product: --no-headers kept a detail table's footer, which --help says it drops.
  it("say there is a next page under the table, unless --no-headers", () => {
    const paged = { ...job, total_tasks: 2, tasks_next_cursor: "abc" };
    expect(renderHuman(paged, {})).toContain("1 of 2 tasks (next page: --tasks-cursor abc)");
    expect(renderHuman(paged, {}, { headers: false })).not.toContain("next page");
  });
});

describe("lists", () => {
  // Found by trying the product: `--output wide` showed a list's compact columns all the same.
  it("show every column with --wide", () => {
    const page = { items: [{ id: "1", name: "sales", status: "COMPLETED", run_type: "MANUAL" }], total: 1, next_cursor: null };
    expect(renderHuman(page, { columns: ["id", "name", "status"] })).not.toContain("RUN_TYPE");
    expect(renderHuman(page, { columns: ["id", "name", "status"] }, { wide: true })).toContain("RUN_TYPE");
  });
});

describe("colour", () => {
  it("colours statuses only, after padding, so columns stay aligned", () => {
    const page = { items: [{ id: "1", status: "FAILED", note: "x" }, { id: "22", status: "COMPLETED", note: "y" }], total: 2, next_cursor: null };
    const text = renderHuman(page, {}, { color: true });
    expect(text.split("\n")[1]).toBe("1   \x1b[31mFAILED   \x1b[0m  x");
    expect(text.split("\n")[2]).toBe("22  \x1b[32mCOMPLETED\x1b[0m  y");
    expect(renderHuman(page, {}, { color: false })).not.toContain("\x1b[");
  });
});
