// References to task results inside arguments and results. A reference is stored as
// {"task_id": "<id>"} (CONTRACT §4 result_ref); wherever one appears in a task's kwargs, that task
// depends on the referenced one and receives its result in its place. A data object is stored as
// {"object": "<name>"}.
//
// Plain data can have those shapes too (a config holding {"task_id": "42"}). Taken as a marker, it
// would hand the task another task's result, or fail. So when a value is stored, a plain object
// that looks like a marker (or like the escape itself) is stored escaped, {"$plain": {...}}, and
// readers take an escaped object literally; views show it unescaped (`fromStoredJson`).

import { DataObject } from "../objects/data-object.js";

/** A scheduled task's future result; `T` is the result type, for the author's type checking. */
export class TaskRef<T = unknown> {
  declare readonly __result?: T;
  constructor(readonly task_id: string) {
    // Anything else would be stored as plain data shaped like a reference, and mean nothing.
    if (typeof task_id !== "string" || !/^[1-9]\d{0,18}$/.test(task_id) || BigInt(task_id) >= 2n ** 63n) {
      throw new TypeError(`a task reference takes a task id (decimal digits), got ${JSON.stringify(task_id)}`);
    }
  }
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

/** The key of an escaped plain object: {"$plain": {"task_id": "42"}} is that object, not a marker. */
export const ESCAPE_KEY = "$plain";

/** The plain object an escape holds, or undefined when `value` is no escape. */
export function escapedObject(value: unknown): Record<string, unknown> | undefined {
  const inner = soleValue(value, ESCAPE_KEY);
  return typeof inner === "object" && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

/** The key that marks a handed-on global object's marker, {"object": name, "$scope": "global"}. */
const SCOPE_KEY = "$scope";

/**
 * A data object's marker: {"object": name}, or {"object": name, "$scope": "global"} for a global
 * object a task handed on (a job object of the same name would otherwise be found first); null for
 * anything else.
 */
export function objectMarker(value: unknown): { name: string; scope?: "global" } | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  const name = (value as { object?: unknown }).object;
  if (typeof name !== "string") return null;
  if (keys.length === 1) return { name };
  return keys.length === 2 && (value as Record<string, unknown>)[SCOPE_KEY] === "global" ? { name, scope: "global" } : null;
}

/** Whether plain data has a shape that readers would take for a marker (or for an escape). */
const looksLikeMarker = (value: unknown, objectNames: ObjectNames): boolean =>
  markerId(value) !== null || (objectNames === "data" && objectMarker(value) !== null) || escapedObject(value) !== undefined;

/**
 * What a plain {"object": "<name>"} means: data, in values task code makes (its data objects are
 * DataObjects); the object of that name, in a run's kwargs sent from outside (JSON has no other
 * way to name one).
 */
export type ObjectNames = "data" | "references";

/** Every task id referenced in a value (TaskRef objects or stored markers), without duplicates. */
export function collectReferences(value: unknown, into = new Set<string>()): Set<string> {
  if (isTaskRef(value)) into.add(value.task_id);
  else if (Array.isArray(value)) value.forEach((v) => collectReferences(v, into));
  else if (typeof value === "object" && value !== null) {
    const id = markerId(value);
    if (id) into.add(id);
    else Object.values(escapedObject(value) ?? value).forEach((v) => collectReferences(v, into));
  }
  return into;
}

/** Every data object a value names ({"object": name} markers), without duplicates. */
export function collectObjectNames(value: unknown, into = new Set<string>()): Set<string> {
  const marker = objectMarker(value);
  if (marker !== null) into.add(marker.name);
  else if (Array.isArray(value)) value.forEach((v) => collectObjectNames(v, into));
  else if (typeof value === "object" && value !== null) Object.values(escapedObject(value) ?? value).forEach((v) => collectObjectNames(v, into));
  return into;
}

/**
 * Replaces every stored marker by the referenced task's (already resolved) result. Escapes stay:
 * the value is still stored form, which the task's thread reads (`reviveObjects`).
 */
export function substituteReferences(value: unknown, results: ReadonlyMap<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => substituteReferences(v, results));
  if (typeof value === "object" && value !== null) {
    const id = markerId(value);
    if (id) {
      if (!results.has(id)) throw new Error(`result of task ${id} is not available`);
      return results.get(id);
    }
    const literal = escapedObject(value);
    if (literal) return { [ESCAPE_KEY]: substituteEntries(literal, results) };
    return substituteEntries(value as Record<string, unknown>, results);
  }
  return value;
}

const substituteEntries = (value: Record<string, unknown>, results: ReadonlyMap<string, unknown>) =>
  Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteReferences(v, results)]));

/** Deepest nesting of a stored value (kwargs from outside stop at 64 levels). */
const MAX_STORED_DEPTH = 500;

/**
 * JSON text of a value with TaskRefs and data objects as markers and marker-shaped plain objects
 * escaped. Throws a clear error for what JSON would change in silence (NaN, a Map, an Error) or
 * cannot hold (a function, a symbol).
 */
export function toStoredJson(value: unknown, what: string, objectNames: ObjectNames = "data"): string {
  // Escapes made here: the object under one's key is stored as it is.
  const escapes = new WeakSet<object>();
  // How deep each object sits: every reader of stored values walks them recursively.
  const depths = new WeakMap<object, number>();
  try {
    return JSON.stringify(value === undefined ? null : value, function (this: Record<string, unknown>, key: string, v: unknown) {
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "function") throw new TypeError(`${described(key)} is a function`);
      if (typeof v === "symbol") throw new TypeError(`${described(key)} is a symbol`);
      if (typeof v === "number" && !Number.isFinite(v)) throw new TypeError(`${described(key)} is ${v}, which JSON has no number for`);
      if (typeof v !== "object" || v === null) return v;
      const depth = (depths.get(this) ?? 0) + 1;
      if (depth > MAX_STORED_DEPTH) throw new TypeError(`it nests objects and arrays more than ${MAX_STORED_DEPTH} levels deep`);
      depths.set(v, depth);
      if (v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet || v instanceof Error || v instanceof RegExp || v instanceof ArrayBuffer || v instanceof Promise) {
        throw new TypeError(`${described(key)} is a ${v.constructor.name}, which JSON would store as {}: convert it to an object or array first`);
      }
      // A typed array or Buffer is stored as {"0": …, "1": …} (a Buffer as {"type": "Buffer", …}).
      if (ArrayBuffer.isView(v)) throw new TypeError(`${described(key)} is a ${v.constructor.name}, which JSON would store as an object of numbered keys: convert it with Array.from first`);
      if (escapes.has(this) && key === ESCAPE_KEY) return v;
      const original = this[key];
      if (original instanceof DataObject) return original.scope === "global" ? { object: original.name, [SCOPE_KEY]: "global" } : v;
      if (original instanceof TaskRef || !looksLikeMarker(v, objectNames)) return v;
      const escape = { [ESCAPE_KEY]: v };
      escapes.add(escape);
      depths.set(escape, depth);
      return escape;
    });
  } catch (error) {
    throw new TypeError(`${what} must be JSON-serializable: ${(error as Error).message}`);
  }
}

const described = (key: string): string => (key === "" ? "the value" : `field ${JSON.stringify(key)}`);

/** A stored value as its author gave it: escapes replaced by the objects they hold (for views). */
export function fromStoredJson(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  return text.includes(`"${ESCAPE_KEY}"`) || text.includes(`"${SCOPE_KEY}"`) ? unescapeValue(value) : value;
}

// From the top down: an escape's object is taken literally, even when it is an escape's shape; a
// global object's marker is shown as every marker is, {"object": name} (CONTRACT §4).
function unescapeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeValue);
  if (typeof value !== "object" || value === null) return value;
  const marker = objectMarker(value);
  if (marker?.scope) return { object: marker.name };
  const literal = escapedObject(value) ?? (value as Record<string, unknown>);
  return Object.fromEntries(Object.entries(literal).map(([k, v]) => [k, unescapeValue(v)]));
}
