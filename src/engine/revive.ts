// Turns {"object": "<name>"} in task arguments back into DataObjects bound to the running task.

import { DataObject } from "../objects/data-object.js";
import type { DataPlane } from "../objects/data-plane.js";
import { soleValue } from "./references.js";

const objectName = (value: unknown): string | null => {
  const name = soleValue(value, "object");
  return typeof name === "string" ? name : null;
};

export async function reviveObjects(value: unknown, plane: DataPlane): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => reviveObjects(v, plane)));
  if (typeof value === "object" && value !== null) {
    const name = objectName(value);
    if (name !== null) return new DataObject(await plane.find(name));
    const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await reviveObjects(v, plane)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}
