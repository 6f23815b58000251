// Process entry of the `jobhouse` binary.

import { keepNewFilesPrivate } from "../core/private-files.js";
import { runCli } from "./cli.js";

export async function main(argv: string[]): Promise<number> {
  // Before any store opens: everything this process creates is its owner's alone.
  keepNewFilesPrivate();
  return runCli(argv);
}
