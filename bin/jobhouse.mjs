#!/usr/bin/env node
// The `jobhouse` binary: registers the TypeScript loader (sources and job files run without a build
// step) and the "jobhouse" specifier for job files, then hands over to the CLI.
import { register } from "node:module";
import { register as registerTypeScript } from "tsx/esm/api";

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
const { main } = await import("../src/app/main.ts");
process.exitCode = await main(process.argv.slice(2));
