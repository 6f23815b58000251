// Entry of a task thread: the same loaders as the `jobhouse` binary (TypeScript sources and job
// files without a build step, "jobhouse" resolving to this installation's SDK), then the thread body.
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { register as registerTypeScript } from "tsx/esm/api";
import { treeModule } from "./source-tree.mjs";

// First, so it sees every child the loaders spawn; the thread body reaches it through this global.
const { port1: loaderChildren, port2 } = new MessageChannel();
register("./loader-children.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });
loaderChildren.unref();
globalThis[Symbol.for("jobhouse.endLoaderChildren")] = () =>
  new Promise((resolve) => {
    loaderChildren.once("message", resolve);
    loaderChildren.postMessage("end");
  });

registerTypeScript();
register("./resolve-sdk.mjs", import.meta.url);
await import(treeModule("engine/task-thread"));
