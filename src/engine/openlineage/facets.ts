// OpenLineage 2.x RunEvent and facet shapes, each facet stamped with its producer and official schema.

export const RUN_EVENT_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";

/** The facet schemas we emit, at the versions whose fields we fill. */
export const FACET_SCHEMA_URLS = {
  parent: "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet",
  errorMessage: "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
  jobType: "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
  sql: "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
  schema: "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
  columnLineage: "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
} as const;

export type EventType = "START" | "COMPLETE" | "FAIL" | "ABORT";

export interface Facet {
  _producer: string;
  _schemaURL: string;
  [field: string]: unknown;
}

export interface JobRef {
  namespace: string;
  name: string;
}

/** A dataset as OpenLineage names it. */
export interface DatasetRef {
  namespace: string;
  name: string;
}

export interface Dataset extends DatasetRef {
  facets: Record<string, Facet>;
}

export interface RunEvent {
  eventTime: string;
  producer: string;
  schemaURL: string;
  eventType: EventType;
  run: { runId: string; facets: Record<string, Facet> };
  job: JobRef & { facets: Record<string, Facet> };
  inputs: Dataset[];
  outputs: Dataset[];
}

/** A field of an input dataset that an output column was computed from. */
export interface FieldRef extends DatasetRef {
  field: string;
}

/** Facet builders for one producer (a URI naming jobhouse and its version). */
export function facetsOf(producer: string) {
  const facet = (schema: keyof typeof FACET_SCHEMA_URLS, fields: Record<string, unknown>): Facet => ({
    _producer: producer,
    _schemaURL: FACET_SCHEMA_URLS[schema],
    ...fields,
  });
  return {
    /** The job run a task attempt belongs to; jobhouse nests one level, so it is also the root. */
    parent: (runId: string, job: JobRef) => facet("parent", { run: { runId }, job, root: { run: { runId }, job } }),
    errorMessage: (message: string) => facet("errorMessage", { message, programmingLanguage: "TypeScript" }),
    jobType: (jobType: "JOB" | "TASK") => facet("jobType", { processingType: "BATCH", integration: "JOBHOUSE", jobType }),
    sql: (query: string) => facet("sql", { query, dialect: "clickhouse" }),
    schema: (fields: { name: string; type: string }[]) => facet("schema", { fields }),
    columnLineage: (fields: Record<string, FieldRef[]>) =>
      facet("columnLineage", { fields: Object.fromEntries(Object.entries(fields).map(([column, inputFields]) => [column, { inputFields }])) }),
  };
}

export type Facets = ReturnType<typeof facetsOf>;
