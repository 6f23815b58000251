// One log file per task attempt (CONTRACT §4: $SERVICE_LOG_DIR/<job_id>/<task_id>/<attempt>.log),
// fed by the task's logger and by console output made on the task's async path.

import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { format } from "node:util";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, makePrivateDir } from "../core/private-files.js";
import { currentExecution } from "./execution.js";
import type { TaskLogger } from "./definitions.js";

export const attemptLogPath = (logDir: string, jobId: bigint, taskId: bigint, attempt: number) =>
  join(logDir, jobId.toString(), taskId.toString(), `${attempt}.log`);

/** Another attempt's log, beside a known one: the worker that ran them may log elsewhere than this process. */
export const earlierAttemptLogPath = (knownLogPath: string, attempt: number) => join(dirname(knownLogPath), `${attempt}.log`);

/**
 * The task's folder, usually one level below its job's: one mkdir, and the recursive walk (several
 * system calls per level, measurable at a thousand attempts a second) only when a parent is missing.
 */
function makeAttemptDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") makePrivateDir(dir);
    else if (code !== "EEXIST") throw error;
  }
}

/**
 * Writes are synchronous appends: a line is in the file the moment it is logged (a reader right
 * after the task ends sees everything), and a small append costs less than an async round trip.
 */
export class AttemptLog {
  private fd: number | null;

  constructor(readonly path: string) {
    try {
      makeAttemptDir(dirname(path));
      this.fd = openSync(path, "a", PRIVATE_FILE_MODE);
    } catch {
      // A full or read-only disk must not fail the task; its outcome is still recorded in SQL.
      this.fd = null;
    }
  }

  write(level: string, text: string): void {
    if (this.fd === null) return;
    try {
      writeSync(this.fd, `${new Date().toISOString()} ${level} ${text}\n`);
    } catch {
      // As above: losing a log line is better than losing the task.
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** The logger a task's context carries (CONTRACT §4 `log`), writing through `write`. */
export function taskLogger(write: (level: string, text: string) => void): TaskLogger {
  const at = (level: string) => (...parts: unknown[]) => write(level, format(...parts));
  return { info: at("INFO"), warn: at("WARNING"), error: at("ERROR"), debug: at("DEBUG") };
}

const CONSOLE_LEVELS = { log: "INFO", info: "INFO", warn: "WARNING", error: "ERROR", debug: "DEBUG" } as const;
let consoleCaptured = false;

/**
 * Routes console output made inside a task attempt to its log; elsewhere console is untouched. So
 * do direct writes to process.stdout (INFO) and process.stderr (ERROR): in a task thread they
 * would otherwise surface on the worker's own output, mixed with every other task's.
 */
export function captureConsole(): void {
  if (consoleCaptured) return;
  consoleCaptured = true;
  for (const [stream, level] of [[process.stdout, "INFO"], [process.stderr, "ERROR"]] as const) {
    const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const execution = currentExecution();
      if (!execution) return original(chunk, ...rest);
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
      execution.write(level, text.replace(/\n$/, ""));
      const callback = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stream.write;
  }
  // Patching console is the point here: task code's console output belongs to the task's log.
  /* eslint-disable no-console */
  for (const [method, level] of Object.entries(CONSOLE_LEVELS) as [keyof typeof CONSOLE_LEVELS, string][]) {
    const original = console[method].bind(console);
    console[method] = (...parts: unknown[]) => {
      const execution = currentExecution();
      if (execution) execution.write(level, format(...parts));
      else original(...parts);
    };
  }
  /* eslint-enable no-console */
}
