// Turns {"object": "<name>"} in task arguments back into DataObjects bound to the running task, and
// escaped plain objects back into themselves: what the task's function receives.

import { DataObject } from "../objects/data-object.js";
import type { DataPlane } from "../objects/data-plane.js";
import { escapedObject, objectMarker } from "./references.js";

export async function reviveObjects(value: unknown, plane: DataPlane): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => reviveObjects(v, plane)));
  if (typeof value === "object" && value !== null) {
    const marker = objectMarker(value);
    if (marker !== null) return new DataObject(await plane.find(marker.name, marker.scope));
    // An escaped plain object is itself, whatever its shape (references.ts).
    const literal = escapedObject(value) ?? value;
    const entries = await Promise.all(Object.entries(literal).map(async ([k, v]) => [k, await reviveObjects(v, plane)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}
