// Data object wire models (SPEC "Data models", CONTRACT §5).

import { z } from "zod";
import { Cursor, DateTimeInput, IdString, Limit, NullableTimestamp, Page, Timestamp } from "./common.js";

export const Scope = z.enum(["temp", "job", "global"]);
export type Scope = z.infer<typeof Scope>;

export const ColumnView = z.object({
  name: z.string(),
  type: z.string().describe("Base type without Nullable/Array/LowCardinality wrappers"),
  nullable: z.boolean(),
  array_depth: z.number().int().nonnegative(),
  low_cardinality: z.boolean(),
});

export const SchemaView = z.object({
  columns: z.array(ColumnView),
  order_by: z.string().nullable(),
  engine: z.string(),
});

export const ObjectView = z.object({
  name: z.string(),
  table: z.string(),
  scope: Scope,
  persistent: z.boolean(),
  row_count: z.number().int().nonnegative(),
  size_bytes: z.number().int().nonnegative(),
  created_at: Timestamp,
  job_id: IdString.nullable(),
});
export type ObjectView = z.infer<typeof ObjectView>;

/** A neighbour in the lineage, exactly: get_object takes its id or its table. */
export const LineageObject = z.object({
  id: IdString,
  name: z.string(),
  table: z.string().nullable().describe("The table it had (a dropped one keeps its table, scope and job); null only for an object recorded before drops were kept"),
  scope: Scope.nullable(),
  job_id: IdString.nullable(),
  exists: z.boolean(),
});

/** A node of an object's upstream graph: an object, existing or dropped, or a file or URL a load read. */
export const LineageNode = z.object({
  key: z.string().describe('"object:<id>", "file:<path>" or "url:<address>"; edges name nodes by it'),
  kind: z.enum(["object", "file", "url"]),
  id: IdString.nullable().describe("The object's id (null for files and URLs)"),
  name: z.string().describe("The object's name, or the file's path or the URL"),
  table: z.string().nullable(),
  scope: Scope.nullable(),
  job_id: IdString.nullable(),
  exists: z.boolean().describe("false once the object was dropped (files and URLs: true, as recorded)"),
  dropped_at: NullableTimestamp,
  operation: z.string().nullable().describe("The operation that made the object"),
  sql: z.string().nullable().describe("The statement of that operation"),
  format: z.string().nullable().describe("Files and URLs: the format they were read as"),
  size_bytes: z.number().int().nonnegative().nullable().describe("Files and URLs: their size when loaded"),
  loaded_at: NullableTimestamp.describe("Files and URLs: when they were loaded"),
});
export type LineageNode = z.infer<typeof LineageNode>;

/** Where a column's values came from: a column of a source (a file's or an existing object's). */
export const ColumnOrigin = z.object({ key: z.string(), kind: z.enum(["object", "file", "url"]), name: z.string(), column: z.string() });

export const LineageGraph = z
  .object({
    root: z.string().describe("The key of the object itself"),
    nodes: z.array(LineageNode),
    edges: z.array(z.object({ from: z.string(), to: z.string() })).describe("`from` is an input of `to`"),
    truncated: z.boolean().describe("The walk stopped at its bounds (64 operations deep, 1,000 nodes)"),
  })
  .describe("The upstream walked through dropped objects to files, URLs and existing objects");

export const LineageSummary = z.object({
  produced_by: z.object({ job_id: IdString.nullable(), task_id: IdString.nullable(), operation: z.string() }).nullable(),
  upstream: z.array(z.string()).describe("Objects this one was made from (direct), by name"),
  downstream: z.array(z.string()).describe("Objects made from this one (direct), by name"),
  upstream_objects: z.array(LineageObject).describe("The objects upstream names, exactly: by id and table (a job-scoped name recurs in every run)"),
  downstream_objects: z.array(LineageObject).describe("The objects downstream names, exactly"),
  columns: z
    .record(z.string(), z.array(z.object({ object: z.string(), column: z.string() })))
    .describe("Column-level lineage: for each column, the input columns it was computed from"),
  operations: z
    .array(
      z.object({
        operation: z.string(),
        sql: z.string(),
        job_id: IdString.nullable(),
        task_id: IdString.nullable(),
        attempt: z.number().int().nullable(),
        at: z.string(),
      }),
    )
    .describe("The operation log of this object: creation, then appends"),
  sources: z.array(LineageNode).describe("Where the data came from through dropped intermediates: files and URLs, then the nearest existing objects"),
  column_sources: z.record(z.string(), z.array(ColumnOrigin)).describe("For each column, the source columns (of files or existing objects) it was computed from"),
  graph: LineageGraph,
});

export const ObjectDetail = ObjectView.extend({
  table_schema: SchemaView,
  lineage_summary: LineageSummary,
});
export type ObjectDetail = z.infer<typeof ObjectDetail>;

/** CONTRACT §5: names match this (at most 63 characters); anything else is 422. */
const NAME = "[A-Za-z_][A-Za-z0-9_]{0,62}";
/** The table of an object of each scope (CONTRACT §5): t_<id>, j_<job_id>_<name>, p_<name>. */
const TABLE = `t_\\d{1,19}|j_\\d{1,19}_${NAME}|p_${NAME}`;

/** An object's name or its table name. */
export const ObjectName = z
  .string()
  .regex(new RegExp(`^(?:${NAME}|${TABLE})$`), "must be an object name (^[A-Za-z_][A-Za-z0-9_]{0,62}$) or its table name")
  .meta({ description: "An object name: letters, digits and _, not starting with a digit, at most 63 characters; or its table name", examples: ["monthly_revenue"] });
/** get_object's ref: a name (the newest object of a job-scoped name), a table name, or an id. */
export const ObjectRef = z
  .string()
  .regex(new RegExp(`^(?:${NAME}|${TABLE}|\\d{1,19})$`), "must be an object name (^[A-Za-z_][A-Za-z0-9_]{0,62}$), a table name or an id")
  .meta({ description: "Object name (a job-scoped name means the newest run's), table name, or id", examples: ["monthly_revenue", "p_monthly_revenue", "912370881995911168"] });

export const ObjectFilter = z.object({
  prefix: z.string().min(1).max(200).optional().meta({ description: "Only objects whose name starts with this text", examples: ["monthly_"] }),
  scope: Scope.optional().meta({ description: "Only objects of this scope", examples: ["global"] }),
  limit: Limit,
  cursor: Cursor.optional(),
});

/** An ObjectFilter (without a default limit: a purge deletes every match unless capped) plus time bounds. */
export const PurgeRequest = z.object({
  prefix: z.string().min(1).max(200).optional().meta({ description: "Only objects whose name starts with this text", examples: ["monthly_"] }),
  scope: Scope.optional().meta({ description: "Only objects of this scope", examples: ["global"] }),
  limit: z.number().int().min(1).max(500).optional().meta({ description: "Delete at most this many (newest first)", examples: [100] }),
  cursor: Cursor.optional().meta({ description: "Start after this cursor of list_objects", examples: ["OTEyMzcwODgxOTk1OTExMTY4"] }),
  before: DateTimeInput.optional().describe("Only objects created before this time"),
  after: DateTimeInput.optional().describe("Only objects created after this time"),
  dry_run: z
    .boolean()
    .default(false)
    .meta({ description: "Delete nothing: list in `would_delete` what the same request would delete", examples: [true] }),
});

export const PurgeResult = z.object({
  deleted: z.array(z.string()).describe("The names of the objects deleted (none on a dry run)"),
  would_delete: z.array(z.string()).optional().describe("On a dry run: the names the purge would delete"),
});
export type PurgeResult = z.infer<typeof PurgeResult>;

/** A page of ObjectView (list responses are named for generated clients). */
export const ObjectPage = Page(ObjectView);
