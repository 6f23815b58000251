// Cutting UTF-8 bytes where no character is split: a log read from an arbitrary offset, or cut to
// a size, decodes to the text that was written, not to U+FFFD pieces of one character.

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** How many bytes at the start of `bytes` belong to a character that began before them (0-3). */
export function leadingContinuationBytes(bytes: Uint8Array): number {
  let skip = 0;
  while (skip < 3 && skip < bytes.length && isContinuation(bytes[skip]!)) skip++;
  return skip;
}

/** The largest cut at or before `end` that splits no character of `bytes` (`end` when none would). */
export function wholeCharactersEnd(bytes: Uint8Array, end: number): number {
  // The last character's first byte, at most 3 bytes back; its length is in that byte.
  let start = end - 1;
  while (start > end - 4 && start > 0 && isContinuation(bytes[start]!)) start--;
  if (start < 0) return end;
  const lead = bytes[start]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + length > end ? start : end;
}
