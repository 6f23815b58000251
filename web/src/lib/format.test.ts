import { describe, expect, it } from "vitest";
import { describeCron } from "./cron.js";
import { formatBytes, formatDuration, relativeTime, spanMs } from "./format.js";
import { type KwargsJsonSchema, parseKwargs, schemaProblems } from "./kwargs.js";
import { hrefFor, parseRoute } from "./route.js";
import { safeNext } from "../views/safe-next.js";

const NOW = Date.parse("2026-11-23T12:00:00.000Z");

describe("formatters", () => {
  it("says how long ago or how soon", () => {
    expect(relativeTime("2026-11-23T12:00:00.000Z", NOW)).toBe("just now");
    expect(relativeTime("2026-11-23T11:59:48.000Z", NOW)).toBe("12 s ago");
    expect(relativeTime("2026-11-23T11:57:00.000Z", NOW)).toBe("3 min ago");
    expect(relativeTime("2026-11-23T14:00:00.000Z", NOW)).toBe("in 2 h");
    expect(relativeTime("2026-11-20T12:00:00.000Z", NOW)).toBe("3 d ago");
    expect(relativeTime(null, NOW)).toBe("—");
    expect(relativeTime("not a time", NOW)).toBe("not a time");
  });

  it("writes durations at a sensible precision", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(4_200)).toBe("4.2 s");
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(185_000)).toBe("3 min 05 s");
    expect(formatDuration(2 * 3_600_000 + 7 * 60_000)).toBe("2 h 07 min");
    expect(formatDuration(26 * 3_600_000)).toBe("1 d 2 h");
  });

  it("writes sizes in binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(912)).toBe("912 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(20 * 1024 * 1024)).toBe("20 MiB");
  });

  it("measures an open span up to now", () => {
    expect(spanMs(null, null, NOW)).toBeNull();
    expect(spanMs("2026-11-23T11:59:00.000Z", null, NOW)).toBe(60_000);
    expect(spanMs("2026-11-23T11:59:00.000Z", "2026-11-23T11:59:30.000Z", NOW)).toBe(30_000);
  });
});

describe("cron in words", () => {
  it.each([
    [null, "manual only"],
    ["* * * * *", "every minute"],
    ["*/5 * * * *", "every 5 minutes"],
    ["15 * * * *", "every hour at minute 15"],
    ["0 */6 * * *", "every 6 hours at minute 0"],
    ["30 2 * * *", "every day at 02:30"],
    ["0 9 * * 1-5", "at 09:00 on Monday through Friday"],
    ["0 9 * * 1,3,5", "at 09:00 on Monday, Wednesday and Friday"],
    ["0 0 1 * *", "at 00:00 on day 1 of the month"],
    ["0 0 1 1 *", "at 00:00 on day 1 of the month in January"],
    ["@hourly", "every hour at minute 0"],
    ["0 0 * * 7", "at 00:00 on Sunday"],
  ])("%s → %s", (expression, words) => {
    expect(describeCron(expression)).toBe(words);
  });

  it("falls back to the expression for forms it does not know", () => {
    expect(describeCron("0 0 L * *")).toBe("0 0 L * *");
    expect(describeCron("1-5/2 * * * *")).toBe("1-5/2 * * * *");
    expect(describeCron("0 0 1 * 1")).toBe("0 0 1 * 1");
    expect(describeCron("not cron")).toBe("not cron");
  });
});

describe("the run-now arguments", () => {
  it("accepts a JSON object or nothing", () => {
    expect(parseKwargs('{"top": 2}')).toEqual({ ok: true, value: { top: 2 } });
    expect(parseKwargs("  ")).toEqual({ ok: true, value: {} });
  });
  it("refuses anything else, saying what it is", () => {
    expect(parseKwargs("[1]")).toMatchObject({ ok: false, problem: expect.stringContaining("not an array") });
    expect(parseKwargs("null")).toMatchObject({ ok: false, problem: expect.stringContaining("not null") });
    expect(parseKwargs("3")).toMatchObject({ ok: false, problem: expect.stringContaining("not a number") });
    expect(parseKwargs("{top: 2}")).toMatchObject({ ok: false, problem: expect.stringMatching(/^Not JSON/) });
  });
});

describe("routes", () => {
  it("reads the view from p, defaulting to the jobs", () => {
    expect(parseRoute("").view).toBe("jobs");
    expect(parseRoute("?p=job&id=7").view).toBe("job");
    expect(parseRoute("?p=job&id=7").params.get("id")).toBe("7");
    expect(parseRoute("?p=bogus").view).toBeNull();
  });
  it("writes links without empty parameters", () => {
    expect(hrefFor("job", { id: "7" })).toBe("/?p=job&id=7");
    expect(hrefFor("objects", { prefix: "", scope: null })).toBe("/?p=objects");
    expect(hrefFor("object", { name: "a b" })).toBe("/?p=object&name=a+b");
  });
  it("returns after sign-in only to a view of this app", () => {
    expect(safeNext("/?p=job&id=7")).toBe("/?p=job&id=7");
    expect(safeNext("https://evil.example/")).toBe("/?p=jobs");
    expect(safeNext("//evil.example/?p=jobs")).toBe("/?p=jobs");
    expect(safeNext(null)).toBe("/?p=jobs");
  });
});

describe("the run-now arguments against the job's schema", () => {
  const schema: KwargsJsonSchema = {
    properties: { limit: { type: "integer", minimum: 10, maximum: 100 }, mode: { enum: ["fast", "slow"] }, file: { type: "string" } },
    required: ["file"],
    additionalProperties: false,
  };
  it("accepts what fits, counting the registered defaults toward required fields", () => {
    expect(schemaProblems({ limit: 20 }, schema, { file: "a.csv" })).toEqual([]);
    expect(schemaProblems({}, null, {})).toEqual([]);
  });
  it("names every field the job would refuse", () => {
    expect(schemaProblems({ limit: 2.5, mode: "medium", extra: 1 }, schema, {})).toEqual([
      '"file" is required',
      '"limit" must be an integer',
      '"mode" must be one of "fast", "slow"',
      '"extra" is not an argument of this job',
    ]);
    expect(schemaProblems({ limit: 500, file: 3 }, schema, {})).toEqual(['"limit" must be at most 100', '"file" must be a string']);
  });
});
