// A JSON Schema of the OpenLineage 2.x RunEvent (spec 2-0-2) and the facets jobhouse emits, from the spec's facts.

import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";

const uri = { type: "string", format: "uri" };
const facetBase = { _producer: uri, _schemaURL: uri };
/** Every facet names its producer and its schema (spec: BaseFacet). */
const facet = (properties: Record<string, unknown> = {}, required: string[] = []) => ({
  type: "object",
  properties: { ...facetBase, ...properties },
  required: ["_producer", "_schemaURL", ...required],
});
const jobRef = { type: "object", properties: { namespace: { type: "string" }, name: { type: "string" } }, required: ["namespace", "name"] };
const runRef = { type: "object", properties: { runId: { type: "string", format: "uuid" } }, required: ["runId"] };
const nonEmpty = { type: "string", minLength: 1 };

const facets = {
  // ParentRunFacet 1-1-0: the parent's run and job, and optionally the root's.
  parent: facet({ run: runRef, job: jobRef, root: { type: "object", properties: { run: runRef, job: jobRef }, required: ["run", "job"] } }, ["run", "job"]),
  // ErrorMessageRunFacet 1-0-1.
  errorMessage: facet({ message: nonEmpty, programmingLanguage: nonEmpty, stackTrace: { type: "string" } }, ["message", "programmingLanguage"]),
  // JobTypeJobFacet 2-0-3.
  jobType: facet({ processingType: { enum: ["BATCH", "STREAMING"] }, integration: nonEmpty, jobType: { type: "string" } }, ["processingType", "integration"]),
  // SQLJobFacet 1-1-0.
  sql: facet({ query: nonEmpty, dialect: { type: "string" } }, ["query"]),
  // SchemaDatasetFacet 1-1-1: fields with a name (and a type here).
  schema: facet({ fields: { type: "array", items: { type: "object", properties: { name: nonEmpty, type: nonEmpty }, required: ["name"] } } }, ["fields"]),
  // ColumnLineageDatasetFacet 1-2-0: per output column, the input fields it came from.
  columnLineage: facet(
    {
      fields: {
        type: "object",
        additionalProperties: {
          type: "object",
          properties: {
            inputFields: {
              type: "array",
              items: { type: "object", properties: { namespace: nonEmpty, name: nonEmpty, field: nonEmpty }, required: ["namespace", "name", "field"] },
            },
          },
          required: ["inputFields"],
        },
      },
    },
    ["fields"],
  ),
};

/** Facets of a kind: the known ones by shape, any other at least a facet. */
const facetMap = (names: (keyof typeof facets)[]) => ({
  type: "object",
  properties: Object.fromEntries(names.map((n) => [n, facets[n]])),
  additionalProperties: facet(),
});
const dataset = (facetNames: (keyof typeof facets)[]) => ({
  type: "object",
  properties: { namespace: nonEmpty, name: nonEmpty, facets: facetMap(facetNames) },
  required: ["namespace", "name"],
});

export const RUN_EVENT_SCHEMA = {
  type: "object",
  properties: {
    eventTime: { type: "string", format: "date-time" },
    producer: uri,
    schemaURL: { const: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent" },
    eventType: { enum: ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"] },
    run: { type: "object", properties: { runId: { type: "string", format: "uuid" }, facets: facetMap(["parent", "errorMessage"]) }, required: ["runId"] },
    job: { type: "object", properties: { namespace: nonEmpty, name: nonEmpty, facets: facetMap(["jobType", "sql"]) }, required: ["namespace", "name"] },
    inputs: { type: "array", items: dataset([]) },
    outputs: { type: "array", items: dataset(["schema", "columnLineage"]) },
  },
  required: ["eventTime", "producer", "schemaURL", "eventType", "run", "job"],
};

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(RUN_EVENT_SCHEMA);

/** The schema's complaints about an event, as readable lines; empty when it is valid. */
export function runEventErrors(event: unknown): string[] {
  if (validate(event)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`);
}
