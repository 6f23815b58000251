// A task's log as the CLI prints it for a person: its text, with a line where an attempt begins or
// where bytes were left out, and notices (not started, written on another host) kept for stderr.

import { visibleControls } from "../../core/control-chars.js";
import type { TaskLogsView } from "../../models/tasks.js";

/** A log as get_task_logs answers it; `host` is absent from a server older than this CLI. */
export type LogRead = Omit<TaskLogsView, "host"> & { host?: string | null };

/** What printing a log shows: its text, a later attempt's start, or bytes left unread. */
export type LogPiece =
  | { kind: "text"; attempt: number; text: string }
  | { kind: "attempt"; attempt: number }
  | { kind: "skipped"; attempt: number; bytes: number };

/**
 * A piece as a person reads it; each ends with a newline. Control characters but tab and newline
 * are shown as escapes: the log is the task's own text, and a task could clear the terminal.
 */
export function logPieceText(piece: LogPiece): string {
  if (piece.kind === "text") return visibleControls(piece.text);
  if (piece.kind === "attempt") return `--- attempt ${piece.attempt} ---\n`;
  return `[... ${piece.bytes} bytes not shown: see the log file ...]\n`;
}

/** Why a log has no text to print here, or undefined when it has. */
export function logNotice(view: LogRead, status?: string): string | undefined {
  if (view.attempt === null) return `task ${view.task_id} has not started${status ? ` (${status})` : ""}: its log begins when a worker starts it`;
  if (!view.available && view.path !== null) return `the log of attempt ${view.attempt} is not readable from here: it is ${view.path} on ${view.host ? `${view.host}, the host of the worker that ran it` : "the host of the worker that ran it"}`;
  if (!view.available) return `attempt ${view.attempt} of task ${view.task_id} has no log file`;
  return undefined;
}

/**
 * `task logs <id>` for a person: the log's text as `--follow` prints it, the place a truncated log
 * starts marked (it printed the last 1 MiB as a `content:` field, with nothing saying bytes were cut).
 */
export function taskLogPieces(view: LogRead): LogPiece[] {
  if (view.attempt === null || !view.available || view.content === "") return [];
  // The bytes before the content's: its size in UTF-8 is near enough to count them.
  const skipped = view.truncated ? Math.max(1, (view.size_bytes ?? 0) - Buffer.byteLength(view.content)) : 0;
  const pieces: LogPiece[] = skipped > 0 ? [{ kind: "skipped", attempt: view.attempt, bytes: skipped }] : [];
  return [...pieces, { kind: "text", attempt: view.attempt, text: view.content }];
}
