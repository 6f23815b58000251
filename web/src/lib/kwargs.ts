// The run-now editor's check: a job's arguments are one JSON object (RunJobRequest.kwargs), so
// anything else is refused before it is sent, with where it went wrong.

export type KwargsCheck = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

export function parseKwargs(text: string): KwargsCheck {
  if (text.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `Not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, problem: `The arguments must be a JSON object ({"key": value}), not ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}.` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** The part of a JSON Schema (as zod writes it) the editor checks before sending. */
export interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
}
export interface KwargsJsonSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
  additionalProperties?: unknown;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function fits(value: unknown, type: string): boolean {
  if (type === "integer") return Number.isInteger(value);
  return typeOf(value) === type;
}

/**
 * What the job's schema would refuse, one line per field: a missing required field (the registered
 * defaults count, they are merged under the arguments), a wrong type, a value out of range or not
 * among its choices, a field the schema does not allow. The server validates in full on submit.
 */
export function schemaProblems(kwargs: Record<string, unknown>, schema: KwargsJsonSchema | null, defaults: Record<string, unknown>): string[] {
  if (schema === null) return [];
  const problems: string[] = [];
  const merged = { ...defaults, ...kwargs };
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) if (!(name in merged)) problems.push(`"${name}" is required`);
  for (const [name, value] of Object.entries(kwargs)) {
    const property = properties[name];
    if (!property) {
      if (schema.additionalProperties === false) problems.push(`"${name}" is not an argument of this job`);
      continue;
    }
    const types = property.type === undefined ? [] : Array.isArray(property.type) ? property.type : [property.type];
    if (types.length > 0 && !types.some((type) => fits(value, type))) {
      problems.push(`"${name}" must be ${types.map((t) => (t === "integer" ? "an integer" : t === "object" || t === "array" ? `an ${t}` : `a ${t}`)).join(" or ")}`);
      continue;
    }
    if (property.enum && !property.enum.some((choice) => JSON.stringify(choice) === JSON.stringify(value))) {
      problems.push(`"${name}" must be one of ${property.enum.map((c) => JSON.stringify(c)).join(", ")}`);
    }
    if (typeof value === "number" && property.minimum !== undefined && value < property.minimum) problems.push(`"${name}" must be at least ${property.minimum}`);
    if (typeof value === "number" && property.maximum !== undefined && value > property.maximum) problems.push(`"${name}" must be at most ${property.maximum}`);
  }
  return problems;
}
