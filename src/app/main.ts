// Process entry of the `jobhouse` binary.

import { keepNewFilesPrivate } from "../core/private-files.js";
import { runCli } from "./cli.js";

export async function main(argv: string[]): Promise<number> {
  // Before any store opens: everything this process creates is its owner's alone.
  keepNewFilesPrivate();
  ignoreClosedReaders();
  return runCli(argv);
}

/**
 * `jobhouse job list | head -1`: the reader leaves early and the next write fails with EPIPE, which
 * unhandled crashed the process with a stack trace (exit 1, outside CONTRACT §7's exit codes). What
 * nobody reads is dropped; the command finishes and exits with its own code.
 */
function ignoreClosedReaders(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
  }
}
