// The execution in progress on this async path: which task attempt is running, and the tasks it
// schedules. Calling a task inside a job or task appends here and returns a reference at once; the
// children are committed only if the attempt succeeds.

import { AsyncLocalStorage } from "node:async_hooks";
import type { IdGenerator } from "../core/ids.js";
import type { NewChild } from "../store/transitions.js";
import type { TaskContext, TaskDefinition } from "./definitions.js";
import type { DataPlane } from "../objects/data-plane.js";
import { providePlane } from "../objects/current-plane.js";
import { TaskRef, collectReferences, toStoredJson } from "./references.js";
import { newTaskRow } from "./task-rows.js";

export interface Execution {
  jobId: bigint;
  taskId: bigint;
  /** The task's `<module>:<name>`, for what is said of it. */
  entrypoint: string;
  context: TaskContext;
  ids: IdGenerator;
  nowMs: () => number;
  defaultTimeoutMs: number | null;
  /** The run's code version: the tasks it schedules belong to the same run, with the same code. */
  codeVersion: string | null;
  children: NewChild[];
  /** Task ids this attempt created: references to them need no lookup. */
  created: Set<string>;
  /** Where console output of this attempt goes. */
  write(level: string, text: string): void;
  /** The data plane of this attempt (its calls reach the column store's thread). */
  plane: DataPlane;
}

export const executions = new AsyncLocalStorage<Execution>();

// Data objects made on this path use this attempt's plane.
providePlane(() => executions.getStore()?.plane);

export function currentExecution(): Execution | undefined {
  return executions.getStore();
}

/** Schedules `definition(kwargs)` as a child of the running attempt; returns its reference. */
export function scheduleTask(definition: TaskDefinition, kwargs: unknown): TaskRef {
  const execution = currentExecution();
  if (!execution) {
    throw new Error(`task "${definition.name}" was called outside a job: tasks are scheduled by calling them inside a job or task`);
  }
  const id = execution.ids.next();
  const kwargsJson = toStoredJson(kwargs ?? {}, `arguments of task "${definition.name}"`);
  const dependsOn = [...collectReferences(JSON.parse(kwargsJson))].map(BigInt);
  execution.children.push({
    row: newTaskRow({
      id,
      jobId: execution.jobId,
      name: definition.name,
      kind: "task",
      entrypoint: definition.entrypoint,
      kwargsJson,
      options: definition.options,
      defaultTimeoutMs: execution.defaultTimeoutMs,
      nowMs: execution.nowMs(),
      codeVersion: execution.codeVersion,
    }),
    dependsOn,
  });
  execution.created.add(id.toString());
  return new TaskRef(id.toString());
}
