// Text from outside (a task's error, a name someone registered) shown on a terminal or in a log
// line: its control characters written as visible escapes. Raw, "\u001b[2J" cleared the screen of
// whoever ran `job list`, an OSC sequence set the terminal's title, and "\r\n" forged log lines.

// C0 controls but tab and newline, DEL, and the C1 controls (CSI and OSC have one-byte forms).
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const escaped = (char: string): string => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;

/**
 * The characters that reorder the text after them (bidirectional embeddings, overrides and
 * isolates): a task's "\u202eevil" showed as "live", so job code could disguise a log line, an
 * error or an argument. They are shown as `\u202e`-style text. (The marks, U+200E and U+200F,
 * only settle the direction of neutral characters, which right-to-left text needs: kept.)
 */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;

const escapedBidi = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** Bidirectional controls as `\u202e`-style text (for the web app, which shows other controls as they are). */
export function visibleBidi(text: string): string {
  return text.replace(BIDI, escapedBidi);
}

/** Control characters (but tab and newline) as `\x1b`-style text, bidirectional ones as `\u202e`. */
export function visibleControls(text: string): string {
  return text.replace(CONTROLS, escaped).replace(BIDI, escapedBidi);
}

/** For one log line: controls escaped, and each further line indented, so none passes for a record. */
export function logLineText(text: string): string {
  return visibleControls(text).replace(/\n/g, "\n  ");
}
