// Turns {"object": "<name>"} in task arguments back into DataObjects bound to the running task, and
// escaped plain objects back into themselves: what the task's function receives.

import { DataObject } from "../objects/data-object.js";
import type { DataPlane } from "../objects/data-plane.js";
import { escapedObject, soleValue } from "./references.js";

const objectName = (value: unknown): string | null => {
  const name = soleValue(value, "object");
  return typeof name === "string" ? name : null;
};

export async function reviveObjects(value: unknown, plane: DataPlane): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => reviveObjects(v, plane)));
  if (typeof value === "object" && value !== null) {
    const name = objectName(value);
    if (name !== null) return new DataObject(await plane.find(name));
    // An escaped plain object is itself, whatever its shape (references.ts).
    const literal = escapedObject(value) ?? value;
    const entries = await Promise.all(Object.entries(literal).map(async ([k, v]) => [k, await reviveObjects(v, plane)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}
