// Named schemas for the OpenAPI document: every wire model exported from src/models (JobView,
// TaskDetail, JobStatus, …) becomes a component under its export name and is referenced by $ref
// wherever an operation uses it, so generated clients get named types. MCP tool listings keep
// their self-contained schemas (operations/schemas.ts): a tool's schema cannot point into a document.

import { z } from "zod";
import * as models from "../../models/index.js";
import type { JsonSchema } from "../../operations/schemas.js";

type Io = "input" | "output";

/** Objects and enums are the models a client names; scalars (IdString, Limit) stay inline. */
const isNamedModel = (value: unknown): value is z.ZodType => value instanceof z.ZodObject || value instanceof z.ZodEnum;

/** Export name of each model (an alias exported twice keeps the first name). */
const MODEL_NAMES = new Map<z.ZodType, string>();
for (const [name, value] of Object.entries(models)) {
  if (isNamedModel(value) && !MODEL_NAMES.has(value)) MODEL_NAMES.set(value, name);
}

const COMPONENTS = "#/components/schemas/";
/** Ids of schemas that are not models (an operation's own input, a page): inlined where used. */
const INLINE = "~inline";

/** Rewrites every component $ref in `value`: `rewrite` returns the new name, or a schema to put in its place. */
function mapRefs(value: unknown, rewrite: (id: string) => string | JsonSchema): unknown {
  if (Array.isArray(value)) return value.map((item) => mapRefs(item, rewrite));
  if (value === null || typeof value !== "object") return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === "string" && ref.startsWith(COMPONENTS)) {
    const target = rewrite(ref.slice(COMPONENTS.length));
    if (typeof target !== "string") return target;
    return { ...value, $ref: COMPONENTS + target };
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapRefs(item, rewrite)]));
}

/**
 * The schemas of a document's operations, converted together: one registry holds every model under
 * its name and each other schema an operation uses under an inline id, and zod converts it once per
 * direction (public API: toJSONSchema of a registry), so models are refs wherever they appear.
 *
 * A model has two forms when it has defaults or transforms (a default makes an input field optional
 * and an output field required): used both ways, its input form is named `<Model>Input`.
 */
export class SchemaComponents {
  private readonly forms: Record<Io, Record<string, JsonSchema>>;
  private readonly idOf = new Map<z.ZodType, string>();
  /** Components referred to so far, as `<io> <id>`. */
  private readonly used = new Set<string>();

  constructor(schemas: readonly z.ZodType[]) {
    const registry = z.registry<{ id: string }>();
    for (const [schema, name] of MODEL_NAMES) this.register(registry, schema, name);
    schemas.forEach((schema, i) => this.register(registry, schema, `${INLINE}${i}`));
    const convert = (io: Io) =>
      (
        z.toJSONSchema(registry, { io, target: "draft-2020-12", unrepresentable: "any", metadata: z.globalRegistry, uri: (id) => COMPONENTS + id }) as unknown as {
          schemas: Record<string, JsonSchema>;
        }
      ).schemas;
    this.forms = { input: convert("input"), output: convert("output") };
  }

  private register(registry: z.core.$ZodRegistry<{ id: string }>, schema: z.ZodType, id: string): void {
    if (this.idOf.has(schema)) return;
    this.idOf.set(schema, id);
    registry.add(schema, { id });
  }

  /** The schema of an operation's input or output (one given to the constructor): a $ref for a model. */
  schemaOf(schema: z.ZodType, io: Io): JsonSchema {
    const id = this.idOf.get(schema);
    if (id === undefined) throw new Error("SchemaComponents.schemaOf: a schema the constructor was not given");
    return this.resolve({ $ref: COMPONENTS + id }, io);
  }

  /** Inline schemas in place, models as refs marked with their direction (named in finish). */
  private resolve(value: unknown, io: Io): JsonSchema {
    return mapRefs(value, (id) => {
      if (id.startsWith(INLINE)) {
        const { $schema: _s, $id: _d, id: _i, ...body } = this.forms[io][id]!;
        return this.resolve(body, io);
      }
      if (!this.used.has(`${io} ${id}`)) {
        this.used.add(`${io} ${id}`);
        this.resolve(this.forms[io][id], io);
      }
      return `${id}@${io}`;
    }) as JsonSchema;
  }

  /** `document` with its refs named, and the components it refers to. */
  finish<T>(document: T): { document: T; schemas: Record<string, JsonSchema> } {
    const both = (id: string) => this.used.has(`input ${id}`) && this.used.has(`output ${id}`);
    const differ = (id: string) => JSON.stringify(this.forms.input[id]) !== JSON.stringify(this.forms.output[id]);
    const name = (marked: string) => {
      const [id, io] = marked.split("@") as [string, Io];
      return io === "input" && both(id) && differ(id) ? `${id}Input` : id;
    };
    const schemas: Record<string, JsonSchema> = {};
    for (const entry of [...this.used].sort()) {
      const [io, id] = entry.split(" ") as [Io, string];
      const { $schema: _s, $id: _d, id: _i, ...body } = this.forms[io][id]!;
      schemas[name(`${id}@${io}`)] ??= mapRefs(this.resolve(body, io), name) as JsonSchema;
    }
    const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
    return { document: mapRefs(document, name) as T, schemas: sorted };
  }
}
