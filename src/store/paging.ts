// Cursor paging shared by every list (CONTRACT §2: the cursor is base64url of the last sort key).

import { sql } from "kysely";
import { invalid } from "../core/errors.js";
import { MAX_ID } from "../core/ids.js";

export const encodeCursor = (key: string): string => Buffer.from(key, "utf8").toString("base64url");

/** Decodes a cursor; `accept` checks the key has the shape this list sorts by. */
export function decodeCursor(cursor: string, accept: (key: string) => boolean): string {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid(`cursor "${cursor}" is malformed`);
  const key = Buffer.from(cursor, "base64url").toString("utf8");
  if (!accept(key)) throw invalid(`cursor "${cursor}" is malformed`);
  return key;
}

export const decodeIdCursor = (cursor: string): bigint => BigInt(decodeCursor(cursor, (k) => /^\d{1,19}$/.test(k) && BigInt(k) <= MAX_ID));

/** Fetch limit+1 rows; the extra row says whether another page exists. */
export function pageOf<Row>(rows: Row[], limit: number, keyOf: (row: Row) => string): { rows: Row[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: encodeCursor(keyOf(page[page.length - 1]!)) };
}

/** Converts a COUNT(*) result (bigint on SQLite, string on PostgreSQL) to a number. */
export const countOf = (row: { count: unknown } | undefined): number => Number(row?.count ?? 0);

/**
 * A case-sensitive prefix test that means the same on both dialects: LIKE is case-insensitive on
 * SQLite and treats `_` as a wildcard, so compare the leading substring instead. The prefix's
 * length is SQL's (in characters, as substr counts), so the prefix is a parameter like any value.
 */
export const startsWith = (column: string, prefix: string) =>
  sql<boolean>`substr(${sql.ref(column)}, 1, length(CAST(${prefix} AS TEXT))) = ${prefix}`;
