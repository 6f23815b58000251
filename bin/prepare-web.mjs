#!/usr/bin/env node
// npm's `prepare` step: builds the web app into web/dist. An install without dev dependencies
// (`npm install --omit=dev`) has no Vite; it says so and goes on, and the server then answers `/`
// with a page naming the command that builds the app (the API and MCP work without it).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
let vite;
try {
  vite = join(dirname(require.resolve("vite/package.json")), "bin", "vite.js");
} catch {
  console.warn("jobhouse: Vite is not installed (dev dependencies omitted): the web app is not built; run `npm run build:web` after installing them.");
  process.exit(0);
}
execFileSync(process.execPath, [vite, "build", "--config", "web/vite.config.ts", "--logLevel", "warn"], { stdio: "inherit" });
