// A loader hook module with no hooks: it runs in a task thread's loader thread (where tsx compiles
// TypeScript through esbuild's service, a child process) and ends the children spawned there when
// the thread retires. A child that outlives the thread which spawned it is never waited for, so
// each recycled thread (a job file edited, a module that failed to load) left a zombie process.
import { createRequire } from "node:module";

const childProcess = createRequire(import.meta.url)("node:child_process");

export function initialize({ port }) {
  const children = new Set();
  const spawn = childProcess.spawn;
  childProcess.spawn = function (...args) {
    const child = spawn.apply(this, args);
    children.add(child);
    child.once("exit", () => children.delete(child));
    return child;
  };
  // Each request ends every live child, and is answered once all have exited (and were waited for).
  port.on("message", async () => {
    await Promise.all(
      [...children].map((child) => new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill();
      })),
    );
    port.postMessage("ended");
  });
  port.unref();
}
