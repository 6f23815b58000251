// Number literals JSON.parse cannot keep: past 2^53 an integer is rounded in silence
// (9007199254740993 becomes …992, 12345678901234567890 becomes 12345678901234567000), and below
// 5e-324 a number becomes 0. Found in the raw text, where the digits still are: after parsing,
// 6.02e23 and a rounded integer look alike, and 1e-400 and 0 are the same.

import { randomUUID } from "node:crypto";

/**
 * The first number literal outside strings that JSON.parse changes in silence, or null: an integer
 * past ±(2^53 - 1) (rounded), or a number that is not zero but too small for a double (1e-400 is
 * read as 0). Say why with lossyNumberMessage.
 */
export function firstLossyNumber(text: string): string | null {
  // Most bodies hold neither: 16 digits in a row, a negative exponent, or 300 zeros after a point
  // (below 1e-323 a number needs one of the last two).
  if (!/\d{16}|\d[eE]-|\.0{300}/.test(text)) return null;
  let found: string | null = null;
  forEachNumberLiteral(text, (start, end) => {
    // Shorter than "1e-324" or than 2^53 written out, a literal keeps its value.
    if (end - start < 6) return true;
    const literal = text.slice(start, end);
    if (!isInexactInteger(literal) && !vanishes(literal)) return true;
    found = literal;
    return false;
  });
  return found;
}

/** Past ±(2^53 - 1): compared as digit strings, which is a tenth of the cost of two BigInts. */
function isInexactInteger(literal: string): boolean {
  if (literal.length < 16 || !/^-?\d+$/.test(literal)) return false;
  const digits = literal.replace(/^-?0*/, "");
  return digits.length > SAFE_DIGITS.length || (digits.length === SAFE_DIGITS.length && digits > SAFE_DIGITS);
}
const SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

/** A literal whose digits are not all zero that reads as 0 (an underflow below 5e-324). */
const vanishes = (literal: string) => Number(literal) === 0 && /[1-9]/.test(literal.split(/[eE]/)[0]!);

export const lossyNumberMessage = (literal: string): string =>
  vanishes(literal)
    ? `the number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} is too small for a JSON number here: it would be read as 0`
    : inexactIntegerMessage(literal);

/**
 * JSON.parse, with each integer literal past ±(2^53 - 1) read as a bigint instead of a rounded
 * number (a file's 64-bit ids; Node 20's JSON.parse shows a reviver no source text).
 */
export function parseJsonExactly(text: string): unknown {
  const literals: [number, number][] = [];
  forEachInexactInteger(text, (literal, start, end) => {
    // Only what JSON.parse itself takes as a value: no leading zero, and not where a key goes
    // (quoted, `{123…: 1}` would have become a valid key).
    if (/^-?[1-9]\d*$/.test(literal) && !/^\s*:/.test(text.slice(end, end + 64))) literals.push([start, end]);
  });
  if (literals.length === 0) return JSON.parse(text);
  // Each such literal becomes a string no data holds (a mark made at random for this process),
  // which the reviver turns into the bigint of its digits.
  let marked = "";
  let from = 0;
  for (const [start, end] of literals) {
    marked += `${text.slice(from, start)}"${INTEGER_MARK_JSON}${text.slice(start, end)}"`;
    from = end;
  }
  marked += text.slice(from);
  return JSON.parse(marked, (_key, value: unknown) => (typeof value === "string" && value.startsWith(INTEGER_MARK) ? BigInt(value.slice(INTEGER_MARK.length)) : value));
}

const MARK_ID = randomUUID();
/** The mark as a value (a NUL, then the id) and as it is written inside a JSON string. */
const INTEGER_MARK = `\u0000${MARK_ID}:`;
const INTEGER_MARK_JSON = `\\u0000${MARK_ID}:`;

/** Calls `found` with each integer literal outside strings past ±(2^53 - 1) until it returns false. */
function forEachInexactInteger(text: string, found: (literal: string, start: number, end: number) => boolean | void): void {
  // Short texts of few digits cannot hold one: most bodies are decided without the walk.
  if (!/\d{16}/.test(text)) return;
  forEachNumberLiteral(text, (start, end) => {
    if (end - start < 16) return true;
    const literal = text.slice(start, end);
    return !isInexactInteger(literal) || found(literal, start, end) !== false;
  });
}

/**
 * Calls `visit` with the bounds of each number literal outside strings until it returns false.
 * Character codes, not regular expressions: a body of megabytes is walked in tens of milliseconds.
 */
function forEachNumberLiteral(text: string, visit: (start: number, end: number) => boolean): void {
  const length = text.length;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c !== 45 && (c < 48 || c > 57)) continue;
    let end = i + 1;
    while (end < length && isNumberCode(text.charCodeAt(end))) end++;
    if (!visit(i, end)) return;
    i = end - 1;
  }
}

/** A digit, ".", "e", "E", "+" or "-". */
const isNumberCode = (c: number) => (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;

export const inexactIntegerMessage = (literal: string): string =>
  `the number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} is an integer past 2^53, which a JSON number here cannot keep exactly (it would be rounded): send an id, or a value of a job's arguments, as a string of digits (no count or limit is this large)`;
