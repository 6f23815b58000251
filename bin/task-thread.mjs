// Entry of a task thread: the same loaders as the `jobhouse` binary (TypeScript sources and job
// files without a build step, "jobhouse" resolving to this installation's SDK), then the thread body.
import { register } from "node:module";
import { register as registerTypeScript } from "tsx/esm/api";
import { treeModule } from "./source-tree.mjs";

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
await import(treeModule("engine/task-thread"));
