// Wire schemas shared by every resource: ids, refs, timestamps, paging, Problem (SPEC "Shared models").

import { z } from "zod";
import { MAX_ID } from "../core/ids.js";

/** CONTRACT §2: ids travel as strings of decimal digits. */
export const IdString = z.string().regex(/^\d{1,20}$/).meta({ description: "Snowflake id as a decimal string", examples: ["912370881995911168"] });

/** An id as input: a string of digits or an integer; handlers receive a bigint. */
export const IdInput = z
  .union([
    z
      .string()
      .regex(/^\d+$/, "must be a string of decimal digits")
      .superRefine((text, ctx) => {
        // "007" would be a second spelling of id 7; said as what it is, not as "out of range".
        if (/^0\d/.test(text)) ctx.addIssue({ code: "custom", message: "an id is written without leading zeros" });
        else if (text.length > 19) ctx.addIssue({ code: "custom", message: "id is out of range" });
      }),
    z.number().int().nonnegative(),
  ])
  .meta({ description: "Snowflake id: a string of decimal digits or an integer", examples: ["912370881995911168"] })
  .transform((value, ctx) => {
    const id = BigInt(value);
    if (id > MAX_ID) {
      ctx.addIssue({ code: "custom", message: "id is out of range" });
      return z.NEVER;
    }
    return id;
  });

/** SPEC RefId: a numeric id or a human-readable name (CONTRACT §4: all digits means an id). */
export const RefId = z
  .union([
    z.number().int().nonnegative(),
    z
      .string()
      .min(1)
      .max(200)
      // As IdInput: "007" found job 7 while task "007" was refused; one resource, one spelling.
      .refine((text) => !/^0\d+$/.test(text), "an id is written without leading zeros"),
  ])
  .meta({ description: "Numeric id or name; an all-digit string is an id, any other string the most recent of that name", examples: ["912370881995911168", "nightly_sales"] })
  .transform((value) => String(value));

export const Timestamp = z.string().meta({ description: "ISO 8601 UTC timestamp with milliseconds", format: "date-time", examples: ["2026-11-22T15:04:05.123Z"] });
export const NullableTimestamp = Timestamp.nullable();

/** A datetime filter bound given by a caller; any ISO 8601 form with a zone is accepted. */
export const DateTimeInput = z
  .string()
  .meta({ description: "ISO 8601 datetime with a zone", format: "date-time", examples: ["2026-11-22T15:04:05Z"] })
  .transform((value, ctx) => {
    const ms = Date.parse(value);
    const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
    // Date.parse rolls impossible days over (Feb 30 → Mar 2): the calendar date must survive.
    const real = day !== null && !Number.isNaN(ms) && new Date(Date.UTC(+day[1]!, +day[2]! - 1, +day[3]!)).getUTCDate() === +day[3]!;
    if (!real) {
      ctx.addIssue({ code: "custom", message: "must be an ISO 8601 datetime" });
      return z.NEVER;
    }
    return ms;
  });

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** CONTRACT §2: limit defaults to 50 and is at most 500; more is 422. */
export const Limit = z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).meta({ description: "Page size (1-500)", examples: [50] });
export const Cursor = z
  .string()
  .max(512)
  .meta({ description: "Opaque cursor from a previous page's next_cursor", examples: ["OTEyMzcwODgxOTk1OTExMTY4"] });

/** Deepest nesting accepted in JSON arguments: deep enough for any real payload, far from stack limits. */
export const MAX_JSON_DEPTH = 64;

function depthOf(value: unknown, limit: number): number {
  if (typeof value !== "object" || value === null) return 0;
  if (limit <= 0) return 1; // already too deep: stop descending
  let deepest = 0;
  for (const child of Object.values(value)) {
    const depth = depthOf(child, limit - 1) + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) break;
  }
  return deepest;
}

/**
 * Where a number JSON cannot hold sits (a literal like 1e400 parses as Infinity, and would be
 * stored as null): the path of the first, or null. Descends no deeper than `limit` levels.
 */
function nonFinitePath(value: unknown, limit: number): (string | number)[] | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : [];
  if (typeof value !== "object" || value === null || limit <= 0) return null;
  for (const [key, child] of Object.entries(value)) {
    const below = nonFinitePath(child, limit - 1);
    if (below) return [Array.isArray(value) ? Number(key) : key, ...below];
  }
  return null;
}

export const JsonObject = z
  .record(z.string(), z.unknown())
  .refine((value) => depthOf(value, MAX_JSON_DEPTH) < MAX_JSON_DEPTH, { message: `nests deeper than ${MAX_JSON_DEPTH} levels` })
  .superRefine((value, ctx) => {
    const path = nonFinitePath(value, MAX_JSON_DEPTH);
    if (path) ctx.addIssue({ code: "custom", path, message: "is a number too large for JSON: it would be stored as null" });
  });

export const Page = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: z.number().int().nonnegative().describe("Every item matching the filter"),
    next_cursor: z.string().nullable().describe("Cursor of the next page; null on the last page"),
  });

export type PageOf<T> = { items: T[]; total: number; next_cursor: string | null };

export const Problem = z.object({
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string().describe("Lowercase error code"),
});

/** For operations that answer with no body (HTTP 204). */
export const NoContent = z.void();
