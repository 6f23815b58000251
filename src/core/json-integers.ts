// Integer literals JSON.parse cannot keep: past 2^53 a number is rounded in silence
// (9007199254740993 becomes …992, 12345678901234567890 becomes 12345678901234567000). Found in the
// raw text, where the digits still are: after parsing, 6.02e23 and a rounded integer look alike.

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The first integer literal outside strings whose value is past ±(2^53 - 1), or null. */
export function firstInexactInteger(text: string): string | null {
  // Short texts of few digits cannot hold one: most bodies are decided without the walk.
  if (!/\d{16}/.test(text)) return null;
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
    i = end - 1;
    if (/^-?\d+$/.test(literal) && (BigInt(literal) > SAFE || BigInt(literal) < -SAFE)) return literal;
  }
  return null;
}

export const inexactIntegerMessage = (literal: string): string =>
  `the number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} is an integer past 2^53, which a JSON number here cannot keep exactly (it would be rounded): send it as a string`;
