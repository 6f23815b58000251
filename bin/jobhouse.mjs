#!/usr/bin/env node
// The `jobhouse` binary: registers the TypeScript loader (job files, and in a checkout the sources,
// run without a build step) and the "jobhouse" specifier for job files, then hands over to the CLI.
import { register } from "node:module";
import { register as registerTypeScript } from "tsx/esm/api";
import { treeModule } from "./source-tree.mjs";

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
const { main } = await import(treeModule("app/main"));
process.exitCode = await main(process.argv.slice(2));
