// Entry of a task thread: the same loaders as the `jobhouse` binary (TypeScript sources and job
// files without a build step, "jobhouse" resolving to this installation's SDK), then the thread body.
import { register } from "node:module";
import { register as registerTypeScript } from "tsx/esm/api";

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
await import("../src/engine/task-thread.ts");
