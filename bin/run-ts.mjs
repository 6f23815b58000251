#!/usr/bin/env node
// Runs a TypeScript script (benchmarks) with the same loaders as the `jobhouse` binary, so job files
// it loads can import "jobhouse".
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { register as registerTypeScript } from "tsx/esm/api";

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
const [script, ...rest] = process.argv.slice(2);
process.argv = [process.argv[0], script, ...rest];
await import(pathToFileURL(resolve(script)).href);
