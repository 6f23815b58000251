// A job's kwargs schema as JSON Schema, for clients that must know a job's arguments without loading
// its module (the web app's run-now editor, agents). Only a zod 4 schema can say what it accepts;
// anything else that merely validates (a hand-written safeParse) has no JSON Schema, which is fine.

import { z } from "zod";
import type { KwargsSchema } from "./definitions.js";

/** Bigger than any sensible kwargs schema; a larger one is left out rather than stored. */
const MAX_SCHEMA_BYTES = 64 * 1024;

/**
 * The fields of a `z.object` schema that says nothing of other keys, or null for any other schema.
 * Its run refuses a field it does not name (loader.ts), though zod's default would drop it.
 */
export function closedObjectFields(schema: unknown): string[] | null {
  const def = (schema as { _zod?: { def?: { type?: string; shape?: Record<string, unknown>; catchall?: unknown } } })._zod?.def;
  return def?.type === "object" && def.shape && def.catchall === undefined ? Object.keys(def.shape) : null;
}

export function kwargsJsonSchema(schema: KwargsSchema | undefined): object | null {
  if (!schema || typeof schema !== "object" || !("_zod" in schema)) return null;
  try {
    // The input side: what a caller sends (defaults make fields optional), not what the job receives.
    const json = z.toJSONSchema(schema as unknown as z.ZodType, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    delete json.$schema;
    // Said as a run enforces it: the web app's editor called arguments with an unknown field fitting.
    if (closedObjectFields(schema) !== null) json.additionalProperties = false;
    return JSON.stringify(json).length <= MAX_SCHEMA_BYTES ? json : null;
  } catch {
    return null;
  }
}
