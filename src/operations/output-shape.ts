// An operation's output checked and copied by a function compiled once from its zod schema: the
// value `schema.parse(value)` gives, for the kinds of schema our models use, at a fraction of the
// cost.
//
// Why: zod's parse walks the schema at run time for every field of every row. A job page of 100
// tasks took 70-100 µs of a ~200 µs request for that alone; the compiled copy is straight-line
// code, one object literal per object, in the schema's field order (so `JSON.stringify` writes the
// same text and unknown fields are dropped, as zod drops them). Each value's type is checked as it
// is copied: a handler that returns a wrong shape is still a defect that fails the request. It does
// not repeat refinements (an id's digits, a count's sign): those constrain what callers send, and
// the tests compare the copy with zod's parse on every read's real output.
//
// Kinds it does not know (unions, pipes, defaults, …) fall back to zod for that field, so a new
// model can never be shaped wrong, only slower.

import type { z } from "zod";

export type OutputShaper = (value: unknown) => unknown;

/** Thrown when a handler's value does not have its operation's output shape (a defect: 500). */
export class OutputShapeError extends Error {}

interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
  checks?: { _zod: { def: { check: string } } }[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Compiles the shaper for one schema. Call once per schema and keep the result. */
export function compileOutputShape(schema: z.ZodType, label: string): OutputShaper {
  const constants: unknown[] = [];
  const constant = (value: unknown): string => `k[${constants.push(value) - 1}]`;
  let names = 0;
  const fresh = (stem: string): string => `${stem}${names++}`;
  const failure = (path: string, expected: string, value: string): string =>
    `fail(${JSON.stringify(path || "(the output)")}, ${JSON.stringify(expected)}, ${value});`;

  /** Statements that check `value` (a local) and leave its shaped copy in the local `target`. */
  function shape(schema: z.ZodType, value: string, target: string, path: string): string {
    const def = defOf(schema);
    switch (def.type) {
      case "string":
        return `if (typeof ${value} !== "string") ${failure(path, "a string", value)} ${target} = ${value};`;
      case "number": {
        const integer = (def.checks ?? []).some((check) => check._zod.def.check === "number_format");
        const test = integer ? `!Number.isInteger(${value})` : `!Number.isFinite(${value})`;
        return `if (${test}) ${failure(path, integer ? "an integer" : "a number", value)} ${target} = ${value};`;
      }
      case "boolean":
        return `if (typeof ${value} !== "boolean") ${failure(path, "a boolean", value)} ${target} = ${value};`;
      case "enum":
      case "literal": {
        const allowed = new Set(def.type === "enum" ? Object.values(def.entries!) : def.values);
        return `if (!${constant(allowed)}.has(${value})) ${failure(path, `one of ${[...allowed].join(", ")}`, value)} ${target} = ${value};`;
      }
      case "nullable":
        return `if (${value} === null) ${target} = null; else { ${shape(def.innerType!, value, target, path)} }`;
      case "unknown":
      case "any":
        return `${target} = ${value};`;
      case "array": {
        const index = fresh("i");
        const item = fresh("v");
        const copy = fresh("c");
        return (
          `if (!Array.isArray(${value})) ${failure(path, "an array", value)}` +
          `${target} = new Array(${value}.length);` +
          `for (let ${index} = 0; ${index} < ${value}.length; ${index}++) { const ${item} = ${value}[${index}]; let ${copy}; ${shape(def.element!, item, copy, `${path}[]`)} ${target}[${index}] = ${copy}; }`
        );
      }
      case "object":
        if (def.catchall === undefined && !Object.values(def.shape!).some((field) => defOf(field).type === "optional")) {
          return shapeObject(def.shape!, value, target, path);
        }
        break;
      case "record":
        if (defOf(def.keyType!).type === "string") return shapeRecord(def.valueType!, value, target, path);
        break;
    }
    // Any other kind: zod checks and shapes this part.
    return `${target} = ${constant(schema)}.parse(${value});`;
  }

  const objectTest = (value: string): string => `typeof ${value} !== "object" || ${value} === null || Array.isArray(${value})`;

  function shapeObject(fields: Record<string, z.ZodType>, value: string, target: string, path: string): string {
    let code = `if (${objectTest(value)}) ${failure(path, "an object", value)}`;
    const copies: string[] = [];
    for (const [key, field] of Object.entries(fields)) {
      const item = fresh("v");
      const copy = fresh("c");
      code += `const ${item} = ${value}[${JSON.stringify(key)}]; let ${copy}; ${shape(field, item, copy, path ? `${path}.${key}` : key)}`;
      copies.push(`${JSON.stringify(key)}: ${copy}`);
    }
    // One literal: V8 builds it from a boilerplate, with the fields in the schema's order.
    return code + `${target} = { ${copies.join(", ")} };`;
  }

  function shapeRecord(valueType: z.ZodType, value: string, target: string, path: string): string {
    const key = fresh("key");
    const item = fresh("v");
    const copy = fresh("c");
    return (
      `if (${objectTest(value)}) ${failure(path, "an object", value)}` +
      `${target} = {};` +
      `for (const ${key} in ${value}) { if (!Object.hasOwn(${value}, ${key})) continue; const ${item} = ${value}[${key}]; let ${copy}; ${shape(valueType, item, copy, `${path}{}`)} ${target}[${key}] = ${copy}; }`
    );
  }

  const body = shape(schema, "value", "out", "");
  const fail = (path: string, expected: string, value: unknown): never => {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    throw new OutputShapeError(`${label}'s output: ${path} must be ${expected}, not ${got}`);
  };
  const compiled = new Function("k", "fail", `return function shapeOutput(value) { let out; ${body} return out; };`);
  return compiled(constants, fail) as OutputShaper;
}
