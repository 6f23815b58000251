#!/usr/bin/env node
// The `jobhouse` binary: registers the TypeScript loader (sources and job files run without a build
// step) and hands over to the CLI.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/app/main.ts");
process.exitCode = await main(process.argv.slice(2));
