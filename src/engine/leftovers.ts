// What an attempt's code leaves behind when it ends, in its task thread: files it opened and did
// not close, child processes still running, timers still due. Found by trying the product: a task
// that forgot 200 descriptors a run brought the server to its descriptor limit within a hundred
// runs (every later job then failed to load its module, with /health still ok), an interval left
// running burned a core for good, and a child process outlived its task's timeout and cancel.
// A thread that ends closes the descriptors its code opened, and its timers end with it: such a
// thread is replaced (see strayWork in task-thread.ts). Child processes are not the thread's: they
// are sent SIGTERM when the attempt is cancelled or times out, and when it ends.

import { ChildProcess } from "node:child_process";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { type Execution, currentExecution } from "./execution.js";

interface Held {
  files: Set<number>;
  children: Set<ChildProcess>;
  /** Ref'd timers of the thread when the attempt started. */
  timersBefore: number;
}

const held = new WeakMap<Execution, Held>();
/** Who opened each descriptor still open, so a close from anywhere (another attempt's code too) clears it. */
const fileOwners = new Map<number, Held>();

const countTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

/** Starts watching an attempt (call before its code runs). */
export function watchAttempt(execution: Execution): void {
  held.set(execution, { files: new Set(), children: new Set(), timersBefore: countTimers() });
}

/** Sends SIGTERM to the attempt's child processes still running (cancel, timeout). */
export function endChildren(execution: Execution): number {
  const children = held.get(execution)?.children ?? new Set();
  for (const child of children) child.kill("SIGTERM");
  return children.size;
}

/**
 * What the attempt left behind, in words (undefined: nothing). Its children still running are sent
 * SIGTERM; the files and timers end with the thread, which the caller then replaces.
 */
export function leftBehind(execution: Execution): string | undefined {
  const h = held.get(execution);
  if (!h) return undefined;
  const parts: string[] = [];
  if (h.files.size > 0) parts.push(`${h.files.size} file(s) open`);
  const children = endChildren(execution);
  if (children > 0) parts.push(`${children} child process(es) running (sent SIGTERM)`);
  const timers = countTimers() - h.timersBefore;
  if (timers > 0) parts.push(`${timers} timer(s) or interval(s) due`);
  return parts.length > 0 ? `left ${parts.join(", ")} when it ended` : undefined;
}

const owner = (): Held | undefined => {
  const execution = currentExecution();
  return execution ? held.get(execution) : undefined;
};

function opened(fd: number): void {
  const h = owner();
  if (!h) return;
  h.files.add(fd);
  fileOwners.set(fd, h);
}

function closed(fd: number): void {
  fileOwners.get(fd)?.files.delete(fd);
  fileOwners.delete(fd);
}

type Callback = (...args: unknown[]) => void;
let installed = false;

/**
 * Wraps the ways task code opens and closes files (fs's sync, callback and promise forms, which
 * streams use too) and starts child processes, so each attempt knows what it holds. Module
 * namespaces already imported (`import { openSync } from "node:fs"`) are updated to the wrappers.
 */
export function trackLeftovers(): void {
  if (installed) return;
  installed = true;
  const mutableFs = fs as unknown as Record<string, unknown>;
  const { openSync, closeSync, open, close } = fs;
  mutableFs.openSync = function (this: unknown, ...args: Parameters<typeof fs.openSync>) {
    const fd = openSync.apply(fs, args);
    opened(fd);
    return fd;
  };
  mutableFs.closeSync = function (this: unknown, fd: number) {
    closeSync.call(fs, fd);
    closed(fd);
  };
  mutableFs.open = function (this: unknown, ...args: unknown[]) {
    const last = args.length - 1;
    const callback = args[last] as Callback;
    if (typeof callback === "function") {
      args[last] = (error: unknown, fd: number) => {
        if (!error) opened(fd);
        callback(error, fd);
      };
    }
    return (open as (...a: unknown[]) => void).apply(fs, args);
  };
  mutableFs.close = function (this: unknown, fd: number, callback?: Callback) {
    return close.call(fs, fd, (error) => {
      if (!error) closed(fd);
      callback?.(error);
    });
  };
  const promiseOpen = fs.promises.open;
  (fs.promises as unknown as Record<string, unknown>).open = async function (...args: Parameters<typeof fs.promises.open>) {
    const handle = await promiseOpen.apply(fs.promises, args);
    const fd = handle.fd;
    // FileHandle's close is an own property (an arrow function), not the prototype's: wrapped here.
    const closeHandle = handle.close;
    handle.close = async () => {
      await closeHandle.call(handle);
      closed(fd);
    };
    opened(fd);
    return handle;
  };
  // Every child_process function (spawn, exec, execFile, fork) starts its child through this method.
  const proto = ChildProcess.prototype as unknown as { spawn(this: ChildProcess, ...args: unknown[]): unknown };
  const spawn = proto.spawn;
  proto.spawn = function (this: ChildProcess, ...args: unknown[]) {
    const result = spawn.apply(this, args);
    const h = owner();
    if (h && this.pid !== undefined && this.exitCode === null) {
      h.children.add(this);
      this.once("exit", () => h.children.delete(this));
    }
    return result;
  };
  syncBuiltinESMExports();
}
