// Tool schemas in the most portable spelling of JSON Schema: agents' model providers map tool
// schemas onto narrower dialects (the OpenAPI subset of Gemini function declarations, for one),
// which reject a `type` array or drop a schema that constrains nothing. So a nullable field is
// written as `anyOf` branches of one type each, a free-form object's values as
// `additionalProperties: true`, and "any JSON value" as the explicit list of JSON types.

type Schema = Record<string, unknown>;

const JSON_TYPES = ["object", "array", "string", "number", "boolean", "null"] as const;
/** Keywords that describe a schema without constraining it. */
const ANNOTATIONS = new Set(["description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"]);
/** Keywords holding one subschema, and those holding a list or a map of them. */
const ONE = ["items", "additionalProperties", "propertyNames", "not", "contains"];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "$defs"];

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);
const split = (schema: Schema, annotation: boolean) => Object.fromEntries(Object.entries(schema).filter(([key]) => ANNOTATIONS.has(key) === annotation));

export function portableSchema(schema: unknown, where: "value" | "additionalProperties" = "value"): unknown {
  if (schema === true || (isSchema(schema) && Object.keys(schema).every((key) => ANNOTATIONS.has(key)))) {
    // Accepts anything: say so in a form every dialect reads.
    if (where === "additionalProperties") return true;
    return { ...(isSchema(schema) ? schema : {}), anyOf: JSON_TYPES.map((type) => ({ type })) };
  }
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ONE.includes(key)) out[key] = portableSchema(value, key === "additionalProperties" ? "additionalProperties" : "value");
    else if (LIST.includes(key) && Array.isArray(value)) out[key] = value.map((item) => portableSchema(item));
    else if (MAP.includes(key) && isSchema(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, portableSchema(item)]));
    else out[key] = value;
  }
  if (Array.isArray(out.type)) {
    // {type: ["string", "null"], pattern} → {anyOf: [{type: "string", pattern}, {type: "null"}]}
    const { type, ...rest } = out;
    const constraints = split(rest, false);
    return { ...split(rest, true), anyOf: (type as string[]).map((t) => (t === "null" ? { type: t } : { type: t, ...constraints })) };
  }
  return out;
}
