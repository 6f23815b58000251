// Which tree this installation runs: in a checkout, the TypeScript sources (through tsx, no build
// step); in a published package, which ships no src/, the compiled JavaScript in dist/ (`npm run
// build`, run by `npm pack`). The binary, the task threads and the "jobhouse" specifier of job
// files all follow it, so the engine and the SDK a job imports are one module instance.
import { existsSync } from "node:fs";

const fromSource = existsSync(new URL("../src/app/main.ts", import.meta.url));

/** The module `path` (without extension, relative to the tree's root) as a file URL. */
export const treeModule = (path) => new URL(fromSource ? `../src/${path}.ts` : `../dist/${path}.js`, import.meta.url).href;
