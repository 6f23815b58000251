// Integer literals JSON.parse cannot keep: past 2^53 a number is rounded in silence
// (9007199254740993 becomes …992, 12345678901234567890 becomes 12345678901234567000). Found in the
// raw text, where the digits still are: after parsing, 6.02e23 and a rounded integer look alike.

import { randomUUID } from "node:crypto";

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The first integer literal outside strings whose value is past ±(2^53 - 1), or null. */
export function firstInexactInteger(text: string): string | null {
  let found: string | null = null;
  forEachInexactInteger(text, (literal) => {
    found = literal;
    return false;
  });
  return found;
}

/**
 * The first number literal outside strings that JSON.parse changes in silence, or null: an integer
 * past ±(2^53 - 1) (rounded), or a number that is not zero but too small for a double (1e-400 is
 * read as 0). Say why with lossyNumberMessage.
 */
export function firstLossyNumber(text: string): string | null {
  const integer = firstInexactInteger(text);
  if (integer !== null || !/[eE]-\d{3}|\.0{300}/.test(text)) return integer;
  let found: string | null = null;
  forEachNumberLiteral(text, (literal) => {
    if (!vanishes(literal)) return true;
    found = literal;
    return false;
  });
  return found;
}

/** A literal whose digits are not all zero that reads as 0 (an underflow below 5e-324). */
const vanishes = (literal: string) => /[1-9]/.test(literal.split(/[eE]/)[0]!) && Number(literal) === 0;

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
  forEachNumberLiteral(text, (literal, start, end) => !(/^-?\d+$/.test(literal) && (BigInt(literal) > SAFE || BigInt(literal) < -SAFE)) || found(literal, start, end) !== false);
}

/** Calls `visit` with each number literal outside strings until it returns false. */
function forEachNumberLiteral(text: string, visit: (literal: string, start: number, end: number) => boolean): void {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
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
    while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
    const literal = text.slice(i, end);
    const start = i;
    i = end - 1;
    if (!visit(literal, start, end)) return;
  }
}

export const inexactIntegerMessage = (literal: string): string =>
  `the number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} is an integer past 2^53, which a JSON number here cannot keep exactly (it would be rounded): send it as a string`;
