import { describe, expect, it } from "vitest";
import { z } from "zod";
import { operations } from "./index.js";
import { OutputShapeError, compileOutputShape } from "./output-shape.js";

interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  entries?: Record<string, string>;
  values?: unknown[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * A value of the schema's shape; `variant` picks among the choices (null or not, which enum
 * member) so that several samples together take every branch.
 */
function sample(schema: z.ZodType, variant: number, extra: boolean): unknown {
  const def = defOf(schema);
  switch (def.type) {
    case "string":
      return String(912_370_881_995_911_168n + BigInt(variant));
    case "number":
      return variant * 7 + 1;
    case "boolean":
      return variant % 2 === 0;
    case "enum": {
      const members = Object.values(def.entries!);
      return members[variant % members.length];
    }
    case "literal":
      return def.values![0];
    case "nullable":
      return variant % 2 === 1 ? null : sample(def.innerType!, variant + 1, extra);
    case "optional":
      return variant % 3 === 2 ? undefined : sample(def.innerType!, variant, extra);
    case "unknown":
      return variant % 3 === 0 ? { nested: [1, "two", null, { three: true }] } : variant % 3 === 1 ? null : "text";
    case "array":
      return [0, 1, 2].map((i) => sample(def.element!, variant + i, extra));
    case "record":
      return { a: sample(def.valueType!, variant, extra), b: sample(def.valueType!, variant + 1, extra) };
    case "object": {
      const value: Record<string, unknown> = extra ? { unlisted: "dropped" } : {};
      for (const [key, field] of Object.entries(def.shape!)) value[key] = sample(field, variant, extra);
      return value;
    }
    case "void":
      return undefined;
    default:
      throw new Error(`no sample for a ${def.type}`);
  }
}

describe("compileOutputShape", () => {
  it("gives what zod's parse gives, for every operation's output", () => {
    for (const op of operations) {
      const shaper = compileOutputShape(op.output, op.name);
      for (let variant = 0; variant < 4; variant++) {
        for (const extra of [false, true]) {
          const value = sample(op.output, variant, extra);
          const parsed = op.output.parse(value);
          const shaped = shaper(value);
          expect(JSON.stringify(shaped), op.name).toBe(JSON.stringify(parsed));
          expect(shaped, op.name).toEqual(parsed);
        }
      }
    }
  });

  it("refuses a value of the wrong type, naming the field", () => {
    const schema = z.object({
      id: z.string(),
      count: z.number().int(),
      ratio: z.number(),
      done: z.boolean(),
      status: z.enum(["A", "B"]),
      items: z.array(z.object({ name: z.string().nullable() })),
      counts: z.record(z.string(), z.number().int()),
    });
    const shaper = compileOutputShape(schema, "op");
    const good = { id: "1", count: 2, ratio: 0.5, done: true, status: "A", items: [{ name: null }], counts: { x: 1 } };
    expect(shaper(good)).toEqual(good);
    const cases: [Record<string, unknown>, string][] = [
      [{ id: 1 }, "op's output: id must be a string, not number"],
      [{ count: 1.5 }, "count must be an integer"],
      [{ count: "2" }, "count must be an integer"],
      [{ ratio: Number.NaN }, "ratio must be a number"],
      [{ ratio: Infinity }, "ratio must be a number"],
      [{ done: 1 }, "done must be a boolean"],
      [{ status: "C" }, "status must be one of A, B"],
      [{ items: {} }, "items must be an array, not object"],
      [{ items: [{ name: 3 }] }, "items[].name must be a string"],
      [{ items: [null] }, "items[] must be an object, not null"],
      [{ counts: { x: "1" } }, "counts{}.x"],
      [{ counts: [] }, "counts must be an object, not an array"],
    ];
    for (const [change, message] of cases) {
      const bad = { ...good, ...change };
      expect(() => shaper(bad), message).toThrow(OutputShapeError);
      expect(() => shaper(bad)).toThrow(message.includes("{}.x") ? "counts{} must be an integer" : message);
      expect(() => schema.parse(bad)).toThrow();
    }
    expect(() => shaper(undefined)).toThrow("(the output) must be an object, not undefined");
  });

  it("leaves kinds it does not compile to zod", () => {
    const schema = z.object({ either: z.union([z.string(), z.number()]), later: z.string().default("x"), maybe: z.string().optional() });
    const shaper = compileOutputShape(z.object({ inner: schema }), "op");
    expect(shaper({ inner: { either: 3 } })).toEqual({ inner: { either: 3, later: "x" } });
    expect(() => shaper({ inner: { either: true } })).toThrow(z.ZodError);
  });
});
