// POST /workers' processes (SPEC rule 2, CONTRACT §9): a detached child running `worker start` that
// outlives the request, with the server's environment and working directory. SERVICE_WORKER_COMMAND
// names another executable; the same arguments follow. The server keeps no child pids.

import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, closeSync, constants, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Config, commandSearchPath, spawnedWorkerEnvironment } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { PRIVATE_FILE_MODE, makePrivateDir } from "../core/private-files.js";
import type { WorkerSpawner } from "../operations/index.js";
import { PACKAGE_ROOT } from "./version.js";

/** Where spawned workers write what a terminal would show: $SERVICE_LOG_DIR/workers/. */
export const spawnedWorkerLogDir = (config: Pick<Config, "logDir">) => join(config.logDir, "workers");

let spawned = 0;

/**
 * How long the request watches the child: a command that fails at once (a wrapper that exits 3, a
 * script whose interpreter is missing) is a 503 with its reason, not a 202 and a silent log file.
 * A worker that reaches its store takes longer than this to fail for any reason of its own.
 */
const EARLY_EXIT_WATCH_MS = 300;

export const detachedWorkerSpawner =
  (config: Config, log: Logger): WorkerSpawner =>
  async (maxTasks) => {
    const args = ["worker", "start", ...(maxTasks === null ? [] : ["--max-tasks", String(maxTasks)])];
    const [command, argv] = config.workerCommand
      ? [config.workerCommand, args]
      : [process.execPath, [fileURLToPath(new URL("bin/jobhouse.mjs", PACKAGE_ROOT)), ...args]];
    refuseUnrunnable(command);
    // No terminal reads a detached child: its startup line, its refusals and its stop go to a file.
    const dir = spawnedWorkerLogDir(config);
    makePrivateDir(dir);
    const logPath = join(dir, `spawned-${Date.now()}-${process.pid}-${spawned++}.log`);
    const output = openSync(logPath, "a", PRIVATE_FILE_MODE);
    let child: ChildProcess;
    try {
      child = spawn(command, argv, { detached: true, stdio: ["ignore", output, output], env: spawnedWorkerEnvironment() });
    } finally {
      closeSync(output);
    }
    const early = await firstOutcome(child);
    if (early.kind === "error" || (early.kind === "exit" && early.code !== 0)) {
      const said = early.kind === "exit" ? lastLine(logPath) : "";
      if (said === "") rmSync(logPath, { force: true });
      throw new Error(
        early.kind === "error"
          ? `${command} could not be started (${early.error.message}${early.error.code === "ENOENT" ? ": for a script, is the interpreter its #! line names there?" : ""})`
          : `${command} exited at once with ${early.code === null ? `signal ${early.signal}` : `code ${early.code}`}${said ? `: ${said}` : ""}`,
      );
    }
    child.unref();
    log.info(`started a worker process (pid ${child.pid}); its output goes to ${logPath}`);
  };

type EarlyOutcome = { kind: "running" } | { kind: "error"; error: NodeJS.ErrnoException } | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null };

/** What the child did in its first EARLY_EXIT_WATCH_MS: failed to start, exited, or is running. */
function firstOutcome(child: ChildProcess): Promise<EarlyOutcome> {
  return new Promise((resolve) => {
    const done = (outcome: EarlyOutcome) => {
      clearTimeout(timer);
      child.removeListener("error", onError);
      child.removeListener("exit", onExit);
      // Later errors of a detached child are no one's to hear.
      child.on("error", () => undefined);
      resolve(outcome);
    };
    const onError = (error: NodeJS.ErrnoException) => done({ kind: "error", error });
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => done({ kind: "exit", code, signal });
    const timer = setTimeout(() => done({ kind: "running" }), EARLY_EXIT_WATCH_MS);
    child.once("error", onError);
    child.once("exit", onExit);
  });
}

/** The last non-empty line a failed child wrote (at most 300 characters), or "". */
function lastLine(path: string): string {
  try {
    const lines = readFileSync(path, "utf8").split("\n").map((line) => line.trim()).filter((line) => line !== "");
    return (lines.at(-1) ?? "").slice(0, 300);
  } catch {
    return "";
  }
}

/** A path that is missing or not executable, said with why (spawn itself only reports it later). */
export function refuseUnrunnable(command: string): void {
  // A bare name is looked for on PATH, as spawn does: its first runnable file, or why none is.
  const candidates = command.includes("/") ? [command] : commandSearchPath().map((dir) => join(dir, command));
  let why = `${command} is not found on PATH`;
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isDirectory()) {
        why = `${candidate} is a directory`;
        continue;
      }
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && candidates.length > 1) continue;
      why = code === "ENOENT" ? `${candidate} does not exist` : code === "EACCES" ? `${candidate} is not executable` : `${candidate} cannot be run (${code})`;
    }
  }
  throw new Error(why);
}
