// References to task results inside arguments and results. A reference is stored as
// {"task_id": "<id>"} (CONTRACT §4 result_ref); wherever one appears in a task's kwargs, that task
// depends on the referenced one and receives its result in its place.

/** A scheduled task's future result; `T` is the result type, for the author's type checking. */
export class TaskRef<T = unknown> {
  declare readonly __result?: T;
  constructor(readonly task_id: string) {}
  toJSON(): { task_id: string } {
    return { task_id: this.task_id };
  }
}

export const isTaskRef = (value: unknown): value is TaskRef => value instanceof TaskRef;

/** The value of `key` when it is the only key of a plain object (the shape of stored markers). */
export function soleValue(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === key ? (value as Record<string, unknown>)[key] : undefined;
}

/** A stored marker: an object whose only key is task_id with a decimal id. */
function markerId(value: unknown): string | null {
  const id = soleValue(value, "task_id");
  return typeof id === "string" && /^\d+$/.test(id) ? id : null;
}

/** Every task id referenced in a value (TaskRef objects or stored markers), without duplicates. */
export function collectReferences(value: unknown, into = new Set<string>()): Set<string> {
  if (isTaskRef(value)) into.add(value.task_id);
  else if (Array.isArray(value)) value.forEach((v) => collectReferences(v, into));
  else if (typeof value === "object" && value !== null) {
    const id = markerId(value);
    if (id) into.add(id);
    else Object.values(value).forEach((v) => collectReferences(v, into));
  }
  return into;
}

/** Replaces every stored marker by the referenced task's (already resolved) result. */
export function substituteReferences(value: unknown, results: ReadonlyMap<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => substituteReferences(v, results));
  if (typeof value === "object" && value !== null) {
    const id = markerId(value);
    if (id) {
      if (!results.has(id)) throw new Error(`result of task ${id} is not available`);
      return results.get(id);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteReferences(v, results)]));
  }
  return value;
}

/** JSON text of a value with TaskRefs as markers; throws a clear error for what JSON cannot hold. */
export function toStoredJson(value: unknown, what: string): string {
  try {
    const text = JSON.stringify(value === undefined ? null : value, (_k, v: unknown) => {
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "function") throw new TypeError("a function");
      return v;
    });
    return text;
  } catch (error) {
    throw new TypeError(`${what} must be JSON-serializable: ${(error as Error).message}`);
  }
}
