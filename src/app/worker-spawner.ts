// POST /workers' processes (SPEC rule 2, CONTRACT §9): a detached child running `worker start` that
// outlives the request, with the server's environment and working directory. SERVICE_WORKER_COMMAND
// names another executable; the same arguments follow. The server keeps no child pids.

import { spawn } from "node:child_process";
import { accessSync, closeSync, constants, openSync, statSync } from "node:fs";
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

export const detachedWorkerSpawner =
  (config: Config, log: Logger): WorkerSpawner =>
  (maxTasks) => {
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
    try {
      const child = spawn(command, argv, { detached: true, stdio: ["ignore", output, output], env: spawnedWorkerEnvironment() });
      child.on("error", () => undefined);
      // A command that cannot run fails at once: no pid.
      if (child.pid === undefined) throw new Error(`${command} could not be started`);
      child.unref();
      log.info(`started a worker process (pid ${child.pid}); its output goes to ${logPath}`);
    } finally {
      closeSync(output);
    }
  };

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
