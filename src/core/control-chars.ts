// Text from outside (a task's error, a name someone registered) shown on a terminal or in a log
// line: its control characters written as visible escapes. Raw, "\u001b[2J" cleared the screen of
// whoever ran `job list`, an OSC sequence set the terminal's title, and "\r\n" forged log lines.

// C0 controls but tab and newline, DEL, and the C1 controls (CSI and OSC have one-byte forms).
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const escaped = (char: string): string => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;

/** Control characters (but tab and newline) as `\x1b`-style text. */
export function visibleControls(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/** For one log line: controls escaped, and each further line indented, so none passes for a record. */
export function logLineText(text: string): string {
  return visibleControls(text).replace(/\n/g, "\n  ");
}
