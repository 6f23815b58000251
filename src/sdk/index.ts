// What job authors import as "jobhouse": job(), task(), the task context, and zod for kwargs
// schemas (a job file in any folder can use them without installing anything).
//
//   import { job, task } from "jobhouse";
//   export const add = task("add", async ({ a, b }: { a: number; b: number }) => a + b, { retries: 2 });
//   export const pipeline = job("pipeline", async ({ n }: { n: number }) => add({ a: add({ a: 1, b: n }), b: 10 }));

// Kept in the declarations (`preserve`): they name Node's types, which a consumer's tsc loads only
// when asked (TypeScript 6+ and `types: []` load no @types of their own accord).
/// <reference types="node" preserve="true" />

import { fileURLToPath } from "node:url";
import { MAX_TASK_TIMEOUT_S } from "../core/worker-limits.js";
import { type JobDefinition, type JobOptions, type TaskContext, type TaskDefinition, type TaskOptions, DEFINITION, taskRegistry } from "../engine/definitions.js";
import { currentExecution, scheduleTask } from "../engine/execution.js";
import { displayModule } from "../engine/loader.js";
import { TaskRef, isTaskRef } from "../engine/references.js";
import { builtinTasks, mapArguments } from "../engine/builtins.js";

export { z } from "zod";
export { DataChain, DataObject, createObject, getObject, loadObject, queryObject } from "../objects/data-object.js";
export type { CreateOptions, Placement, Scope } from "../objects/object-registry.js";
export type { FileOptions, FileFormat } from "../objects/ingest.js";
export { NonRetryableError } from "../engine/definitions.js";
export { TaskRef } from "../engine/references.js";
// Named so a job file's declarations can name what its exports are (`declaration: true`).
export type { JobDefinition, JobOptions, TaskContext, TaskDefinition, TaskLogger, TaskOptions } from "../engine/definitions.js";

/** A value, or a reference to a task whose result will stand in its place. */
/**
 * A key for one side effect of a task, the same on every attempt of that task and different for
 * every other task (and every run): store it with the effect under a unique constraint (INSERT …
 * ON CONFLICT DO NOTHING, an idempotency header) and a retry after a lost worker cannot apply the
 * effect twice. `name` tells several effects of one task apart. Tasks run at least once; see
 * docs/RELIABILITY.md.
 */
export function effectKey(ctx: Pick<TaskContext, "job_id" | "task_id">, name = "effect"): string {
  return `jobhouse:${ctx.job_id}:${ctx.task_id}:${name}`;
}

export type Ref<T> = T | TaskRef<T>;
export type Refs<A> = A extends object ? { [K in keyof A]: Ref<A[K]> | Refs<A[K]> } : Ref<A>;

export interface MapOptions {
  /** Pass each item as this argument (otherwise the item is the argument object). */
  as?: string;
  /** Arguments shared by every application. */
  with?: Record<string, unknown>;
}

export interface TaskFunction<A, R> extends TaskDefinition {
  /** Schedules this task with `kwargs`; references in them become dependencies. */
  (kwargs: Refs<A>): TaskRef<Awaited<R>>;
  /** Fans out over a list: one task per item; returns their references. */
  map(items: unknown[], options?: MapOptions): TaskRef<Awaited<R>>[];
  /**
   * Fans out over another task's result, a list whose length is known only at run time; returns a
   * reference to the list of results.
   */
  map(items: TaskRef<unknown[]>, options?: MapOptions): TaskRef<Awaited<R>[]>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
const SDK_DIR = fileURLToPath(new URL(".", import.meta.url));

/** The module that called task(): from the stack, skipping this file. */
function callerModuleUrl(): string {
  const stack = new Error().stack ?? "";
  for (const line of stack.split("\n").slice(1)) {
    const match = /(file:\/\/\/[^\s)]+?|\/[^\s()]+?\.(?:ts|mts|js|mjs)):\d+:\d+\)?\s*$/.exec(line);
    if (!match) continue;
    const location = match[1]!;
    const url = location.startsWith("file:") ? location : `file://${location}`;
    if (fileURLToPath(url).startsWith(SDK_DIR)) continue;
    return url;
  }
  throw new Error("task() could not tell which module defines it; define tasks at the top level of a module");
}

export function task<A = Record<string, unknown>, R = unknown>(
  name: string,
  fn: (kwargs: A, ctx: TaskContext) => R | Promise<R>,
  options: TaskOptions = {},
): TaskFunction<A, R> {
  // Quoted as JSON: a name with a line break or a control character (refused here) cut the
  // message where the module's load failure keeps its first line.
  if (!NAME.test(name)) throw new Error(`task name ${JSON.stringify(name)} must match ${NAME}`);
  validateOptions(options, `task "${name}"`);
  const moduleUrl = callerModuleUrl();
  // A stored task names its code by module and task name: a second task of that name would take
  // the first one's calls too.
  if (taskRegistry.has(`${moduleUrl}#${name}`)) {
    // Defined inside a job's or task's function, it is defined again at each run on the same thread
    // (and a fresh worker, which imports the module to find it, never sees it).
    if (currentExecution()) throw new Error(`task "${name}" of ${displayModule(moduleUrl)} is defined again while a job runs: define tasks at the top level of their module, not inside a job or task function`);
    throw new Error(`task name "${name}" is used twice in ${displayModule(moduleUrl)}: each task of a module needs a name of its own`);
  }
  const definition = ((kwargs: Refs<A>) => scheduleTask(definition, kwargs)) as TaskFunction<A, R>;
  Object.defineProperty(definition, "name", { value: name });
  Object.assign(definition, {
    [DEFINITION]: "task",
    fn,
    options: Object.freeze({ ...options }),
    entrypoint: `${displayModule(moduleUrl)}:${name}`,
    map(items: unknown[] | TaskRef<unknown[]>, mapOptions: MapOptions = {}) {
      if (Array.isArray(items)) return items.map((item) => scheduleTask(definition, mapArguments(item, mapOptions.as, mapOptions.with)));
      if (!isTaskRef(items)) throw new TypeError(`${name}.map needs a list or a reference to a task returning a list`);
      const mapper = mapperFor();
      return scheduleTask(mapper, { task: definition.entrypoint, items, as: mapOptions.as, with: mapOptions.with });
    },
  });
  taskRegistry.set(`${moduleUrl}#${name}`, definition);
  return definition;
}

export function job<A = Record<string, unknown>, R = unknown>(
  name: string,
  fn: (kwargs: A, ctx: TaskContext) => R | Promise<R>,
  options: JobOptions = {},
): JobDefinition {
  if (!NAME.test(name)) throw new Error(`job name ${JSON.stringify(name)} must match ${NAME}`);
  validateOptions(options, `job "${name}"`, [...TASK_OPTION_KEYS, "schema"]);
  return Object.freeze({ [DEFINITION]: "job" as const, name, fn: fn as JobDefinition["fn"], options: Object.freeze({ ...options }) });
}

/** The context of the task running on this async path (the same object its function receives). */
export function currentContext(): TaskContext {
  const execution = currentExecution();
  if (!execution) throw new Error("currentContext() is only available inside a running task");
  return execution.context;
}

const MAX_RETRIES = 1000;

const TASK_OPTION_KEYS = ["retries", "backoff_s", "timeout_s", "concurrency"];

function validateOptions(options: TaskOptions | JobOptions, what: string, known = TASK_OPTION_KEYS): void {
  // A typo (`retry`, `timeout`) would otherwise be ignored in silence: module code is not type-checked.
  const unknown = Object.keys(options ?? {}).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new Error(`${what}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (options are ${known.join(", ")})`);
  const check = (key: "retries" | "backoff_s" | "timeout_s", min: number, max: number, whole = false) => {
    const value = options[key];
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max || (whole && !Number.isInteger(value)))) {
      throw new Error(`${what}: ${key} must be a ${whole ? "whole number" : "number"} from ${min} to ${max}`);
    }
  };
  check("retries", 0, MAX_RETRIES, true);
  check("backoff_s", 0, MAX_TASK_TIMEOUT_S);
  check("timeout_s", 0.001, MAX_TASK_TIMEOUT_S);
  const concurrency = options.concurrency;
  if (concurrency !== undefined) {
    const keyOk = typeof concurrency?.key === "string" && /^[A-Za-z0-9_.:-]{1,200}$/.test(concurrency.key);
    if (!keyOk) throw new Error(`${what}: concurrency.key must be 1-200 letters, digits, '_', '.', ':' or '-'`);
    if (!Number.isInteger(concurrency.limit) || concurrency.limit < 1) throw new Error(`${what}: concurrency.limit must be a whole number >= 1`);
  }
}

const mapperFor = () => builtinTasks.get("map")!;
