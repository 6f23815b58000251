#!/usr/bin/env node
// The `jobhouse` binary: registers the TypeScript loader (job files, and in a checkout the sources,
// run without a build step) and the "jobhouse" specifier for job files, then hands over to the CLI.
// Only node: built-ins are imported statically, so the stop listener below is in place before the
// second or so that loading everything else takes.
import { listenEarlyForStop } from "./early-stop.mjs";

// A long-running command (a server, a worker) must end cleanly on SIGTERM even while it loads: the
// signal is kept for the command, which ends with 0 once its startup settles (app/signals.ts).
listenEarlyForStop(process.argv.slice(2));
const { register } = await import("node:module");
const { register: registerTypeScript } = await import("tsx/esm/api");
const { treeModule } = await import("./source-tree.mjs");

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
const { main } = await import(treeModule("app/main"));
process.exitCode = await main(process.argv.slice(2));
