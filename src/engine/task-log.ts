// One log file per task attempt (CONTRACT §4: $SERVICE_LOG_DIR/<job_id>/<task_id>/<attempt>.log),
// fed by the task's logger and by console output made on the task's async path.

import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname, join } from "node:path";
import { format } from "node:util";
import { currentExecution } from "./execution.js";
import type { TaskLogger } from "./definitions.js";

export const attemptLogPath = (logDir: string, jobId: bigint, taskId: bigint, attempt: number) =>
  join(logDir, jobId.toString(), taskId.toString(), `${attempt}.log`);

export class AttemptLog {
  private readonly stream: WriteStream;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.stream = createWriteStream(path, { flags: "a" });
    // A full disk must not crash the worker; the task's outcome is still recorded in SQL.
    this.stream.on("error", () => undefined);
  }

  write(level: string, text: string): void {
    this.stream.write(`${new Date().toISOString()} ${level} ${text}\n`);
  }

  logger(): TaskLogger {
    const at = (level: string) => (...parts: unknown[]) => this.write(level, format(...parts));
    return { info: at("INFO"), warn: at("WARNING"), error: at("ERROR"), debug: at("DEBUG") };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}

const CONSOLE_LEVELS = { log: "INFO", info: "INFO", warn: "WARNING", error: "ERROR", debug: "DEBUG" } as const;
let consoleCaptured = false;

/** Routes console output made inside a task attempt to its log; elsewhere console is untouched. */
export function captureConsole(): void {
  if (consoleCaptured) return;
  consoleCaptured = true;
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
