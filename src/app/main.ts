// Process entry of the `jobhouse` binary.

import { runCli } from "./cli.js";

export async function main(argv: string[]): Promise<number> {
  return runCli(argv);
}
