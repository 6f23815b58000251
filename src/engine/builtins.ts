// Built-in tasks, addressed as `jobhouse:<name>`: `map` fans a task out over a list whose length is
// known only at run time (the list is another task's result).

import { DEFINITION, type TaskDefinition } from "./definitions.js";

export const BUILTIN_MODULE = "jobhouse";

export interface MapArguments {
  /** Entrypoint of the task to apply to each item. */
  task: string;
  items: unknown[];
  /** When set, each item is passed as this argument; otherwise the item is the argument object. */
  as?: string;
  with?: Record<string, unknown>;
}

/** Arguments of one application of the mapped task to `item`. */
export const mapArguments = (item: unknown, as?: string, extra?: Record<string, unknown>): unknown =>
  as ? { ...(extra ?? {}), [as]: item } : extra ? { ...extra, ...(item as object) } : item;

type Resolver = (entrypoint: string) => Promise<TaskDefinition>;
type Scheduler = (definition: TaskDefinition, kwargs: unknown) => unknown;

let resolveTask: Resolver | undefined;
let schedule: Scheduler | undefined;

/** Wired by the runner: the built-ins need the loader and the scheduler without importing them in a cycle. */
export function wireBuiltins(resolver: Resolver, scheduler: Scheduler): void {
  resolveTask = resolver;
  schedule = scheduler;
}

const mapTask: TaskDefinition = {
  [DEFINITION]: "task",
  name: "map",
  entrypoint: `${BUILTIN_MODULE}:map`,
  options: {},
  fn: (async (args: MapArguments) => {
    if (!Array.isArray(args.items)) throw new TypeError(`map needs a list, got ${typeof args.items}`);
    const definition = await resolveTask!(args.task);
    return args.items.map((item) => schedule!(definition, mapArguments(item, args.as, args.with)));
  }) as never,
};

export const builtinTasks = new Map<string, TaskDefinition>([["map", mapTask]]);
