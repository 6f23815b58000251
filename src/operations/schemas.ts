// JSON Schemas of operation inputs and outputs, derived once from the zod definitions and shared by
// OpenAPI, MCP tool listings and the string coercion of query parameters and CLI options.

import { invalid } from "../core/errors.js";
import { firstLossyNumber, lossyNumberMessage } from "../core/json-integers.js";
import { PROTOTYPE_KEY_MESSAGE, hasPrototypeKey } from "../core/prototype-keys.js";
import { z } from "zod";
import type { AnyOperation } from "./define.js";

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  [key: string]: unknown;
};

const cache = new WeakMap<z.ZodType, { input: JsonSchema; output: JsonSchema }>();

function convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return json;
}

export function inputSchemaOf(op: AnyOperation): JsonSchema {
  return schemasOf(op.input).input;
}

export function outputSchemaOf(op: AnyOperation): JsonSchema {
  return schemasOf(op.output).output;
}

function schemasOf(schema: z.ZodType) {
  let entry = cache.get(schema);
  if (!entry) {
    entry = { input: convert(schema, "input"), output: convert(schema, "output") };
    cache.set(schema, entry);
  }
  return entry;
}

/** The JSON types a field accepts ("string", "integer", "object", …), through anyOf and nullables. */
export function fieldTypes(field: JsonSchema | undefined): Set<string> {
  const types = new Set<string>();
  const visit = (s: JsonSchema | undefined) => {
    if (!s) return;
    if (typeof s.type === "string") types.add(s.type);
    if (Array.isArray(s.type)) s.type.forEach((t) => types.add(t));
    if (Array.isArray(s.enum)) types.add("string");
    s.anyOf?.forEach(visit);
    (s.oneOf as JsonSchema[] | undefined)?.forEach(visit);
  };
  visit(field);
  return types;
}

/**
 * Drops `null` from optional fields that do not take null, so null means "not given" and the
 * field's default applies: clients generated from the spec's models (and MCP agents) send every
 * optional field, unset ones as null (`{"name": "sales", "preservation_mode": null}`). A required
 * field, or one where null is a value of its own (`schedule`, `max_tasks`), is left to validation.
 */
export function dropUnsetNulls(op: AnyOperation, raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const schema = inputSchemaOf(op);
  const required = new Set(schema.required ?? []);
  const properties = schema.properties ?? {};
  const entries = Object.entries(raw).filter(([key, value]) => {
    if (value !== null || required.has(key) || !Object.hasOwn(properties, key)) return true;
    const types = fieldTypes(properties[key]);
    // A field of no declared type may hold any JSON value, null included.
    return types.size === 0 || types.has("null");
  });
  return entries.length === Object.keys(raw).length ? raw : Object.fromEntries(entries);
}

/**
 * Turns text values (query parameters, CLI options) into the JSON types the input declares:
 * "50" → 50 for a number field, "true" → true for a boolean, '{"a":1}' → an object. A value that
 * does not convert is passed on unchanged, so validation reports it with the field's name.
 */
export function coerceTextInput(op: AnyOperation, ...sources: Record<string, unknown>[]): Record<string, unknown> {
  const properties = inputSchemaOf(op).properties ?? {};
  const out: Record<string, unknown> = {};
  // Later sources win (path parameters over the query string).
  for (const raw of sources) {
    for (const key in raw) {
      const value = raw[key];
      const coerced = typeof value === "string" ? coerceText(key, value, fieldTypes(properties[key]), properties[key]?.maximum) : value;
      // `?__proto__=…` is a field like any other (refused as unknown), not this object's prototype.
      Object.defineProperty(out, key, { value: coerced, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

function coerceText(key: string, value: string, types: Set<string>, maximum?: unknown): unknown {
  // Before text: a nullable field's "null" is null (`--schedule null`, as its help says).
  if (types.has("null") && value === "null") return null;
  if (types.has("string")) return value;
  // Written as the field's type is, nothing around it: " 5", "10.0" and "1e2" for an integer were
  // taken as 5, 10 and 100.
  if (types.has("number") && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) return Number(value);
  if (types.has("integer") && /^-?\d+$/.test(value)) {
    const n = Number(value);
    // Past 2^53 zod names its own bound (9007199254740991), not the field's (a limit's 500).
    if (!Number.isSafeInteger(n)) throw invalid(`${key}: ${typeof maximum === "number" && n > 0 ? `Too big: expected number to be <=${maximum}` : lossyNumberMessage(value)}`);
    return n;
  }
  // Said as what it is, not as the schema's "expected number, received string".
  if (types.has("integer") && !types.has("string") && /^\s*[-+]?[\d.]/.test(value)) throw invalid(`${key}: must be a whole number written in digits, got ${JSON.stringify(value.slice(0, 40))}`);
  if (types.has("boolean") && (value === "true" || value === "false")) return value === "true";
  if (types.has("object") || types.has("array")) {
    const lossy = firstLossyNumber(value);
    if (lossy !== null) throw invalid(`${key}: ${lossyNumberMessage(lossy)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      // Said as what it is, not as the schema's "expected record, received string".
      throw invalid(`${key}: invalid JSON (${(error as Error).message})`);
    }
    // Refused as REST refuses it: the schema's copy would have dropped the field in silence.
    if (hasPrototypeKey(parsed)) throw invalid(`${key}: ${PROTOTYPE_KEY_MESSAGE}`);
    return parsed;
  }
  return value;
}
