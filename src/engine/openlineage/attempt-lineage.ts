// What one task attempt made and read, from the operation log: outputs, inputs, column origins, SQL.

import type { Store } from "../../store/db.js";
import { chunksOf } from "../../store/chunks.js";
import type { DatasetRef, FieldRef } from "./facets.js";
import { type TableNaming, sourceDataset, tableDataset } from "./names.js";

export interface AttemptOutput {
  dataset: DatasetRef;
  /** Its table while it exists (the schema is read from it), null once dropped. */
  liveTable: string | null;
  /** Per column, the input fields it came from (through objects the same attempt made). */
  columnOrigins(columns: readonly string[]): Record<string, FieldRef[]>;
  /**
   * Columns the log knows of, for when the table is gone and its schema cannot be read: its own
   * column edges and the columns other objects were computed from.
   */
  knownColumns: string[];
}

export interface AttemptLineage {
  /** Each operation's SQL, in order. */
  sql: string[];
  outputs: AttemptOutput[];
  inputs: DatasetRef[];
}

interface Source {
  kind: string;
  location: string;
}

/** The attempt's lineage; empty when it made no object. */
export async function readAttemptLineage(db: Store, naming: TableNaming, taskId: bigint, attempt: number): Promise<AttemptLineage> {
  const ops = await db
    .selectFrom("object_ops")
    .select(["id", "object_id", "object_name", "sql_text"])
    .where("task_id", "=", taskId)
    .where("attempt", "=", attempt)
    .orderBy("id")
    .execute();
  if (ops.length === 0) return { sql: [], outputs: [], inputs: [] };
  const made = new Map<bigint, string>();
  for (const op of ops) if (!made.has(op.object_id)) made.set(op.object_id, op.object_name);
  const opIds = ops.map((op) => op.id);
  const madeIds = [...made.keys()];

  const inputs: { object_id: bigint; input_id: bigint; input_name: string }[] = [];
  const sources: { object_id: bigint; kind: string; location: string }[] = [];
  const lineage: { object_id: bigint; column_name: string; input_id: bigint; input_column: string }[] = [];
  // Inputs and sources by operation (this attempt's only); column edges are kept per object.
  for (const chunk of chunksOf(opIds)) {
    const [i, s] = await Promise.all([
      db.selectFrom("object_inputs").select(["object_id", "input_id", "input_name"]).where("op_id", "in", chunk).orderBy("op_id").orderBy("input_id").execute(),
      db.selectFrom("object_sources").select(["object_id", "kind", "location"]).where("op_id", "in", chunk).orderBy("op_id").execute(),
    ]);
    inputs.push(...i);
    sources.push(...s);
  }
  for (const chunk of chunksOf(madeIds)) {
    lineage.push(...(await db.selectFrom("column_lineage").select(["object_id", "column_name", "input_id", "input_column"]).where("object_id", "in", chunk).execute()));
  }

  const tables = await readTables(db, [...new Set([...madeIds, ...inputs.map((i) => i.input_id)])]);
  const objectDataset = (id: bigint, name: string): DatasetRef => tableDataset(naming, tables.get(id)?.table ?? name);

  const sourcesOf = new Map<bigint, Source[]>();
  for (const s of sources) sourcesOf.set(s.object_id, [...(sourcesOf.get(s.object_id) ?? []), s]);
  const edges = new Map<bigint, Map<string, { inputId: bigint; column: string }[]>>();
  for (const row of lineage) {
    const byColumn = edges.get(row.object_id) ?? new Map<string, { inputId: bigint; column: string }[]>();
    edges.set(row.object_id, byColumn);
    byColumn.set(row.column_name, [...(byColumn.get(row.column_name) ?? []), { inputId: row.input_id, column: row.input_column }]);
  }
  const inputNames = new Map(inputs.map((i) => [i.input_id, i.input_name]));
  // Columns of each object the log knows: its own edges, and those other objects read from it.
  const knownColumns = new Map<bigint, Set<string>>();
  const know = (id: bigint, column: string) => knownColumns.set(id, (knownColumns.get(id) ?? new Set<string>()).add(column));
  for (const row of lineage) {
    know(row.object_id, row.column_name);
    know(row.input_id, row.input_column);
  }

  // inputFields name the run's inputs: an object this attempt made and then read is its output,
  // not an input, so a column's origin is followed through it to what the attempt read.
  const trace = (objectId: bigint, column: string, seen: Set<string>): FieldRef[] => {
    const marker = `${objectId}.${column}`;
    if (seen.has(marker)) return [];
    seen.add(marker);
    // Column edges are kept per object, whatever operation recorded them: an append to an object
    // another run made carries that run's edges, whose inputs this attempt never read (they were
    // named by bare object ids). Only edges to what this attempt read or made are its lineage.
    const rows = edges.get(objectId)?.get(column)?.filter((r) => made.has(r.inputId) || inputNames.has(r.inputId));
    // A loaded object's columns are its file's (or URL's) columns of the same names.
    if (!rows || rows.length === 0) return (sourcesOf.get(objectId) ?? []).map((s) => ({ ...sourceDataset(s.kind, s.location), field: column }));
    return rows.flatMap((r) =>
      made.has(r.inputId) && r.inputId !== objectId
        ? trace(r.inputId, r.column, seen)
        : [{ ...objectDataset(r.inputId, inputNames.get(r.inputId)!), field: r.column }],
    );
  };

  const outputs = [...made].map(([id, name]): AttemptOutput => ({
    dataset: objectDataset(id, name),
    liveTable: tables.get(id)?.live ? tables.get(id)!.table : null,
    knownColumns: [...(knownColumns.get(id) ?? [])],
    columnOrigins(columns) {
      const origins: Record<string, FieldRef[]> = {};
      for (const column of columns) {
        const unique = new Map(trace(id, column, new Set()).map((f) => [`${f.namespace}|${f.name}|${f.field}`, f]));
        if (unique.size > 0) origins[column] = [...unique.values()];
      }
      return origins;
    },
  }));

  const read = new Map<string, DatasetRef>();
  const addInput = (d: DatasetRef) => read.set(`${d.namespace}|${d.name}`, d);
  for (const i of inputs) if (!made.has(i.input_id)) addInput(objectDataset(i.input_id, i.input_name));
  for (const s of sources) addInput(sourceDataset(s.kind, s.location));
  return { sql: ops.map((op) => op.sql_text), outputs, inputs: [...read.values()] };
}

/** Each object's table: from the registry while it exists, else from its dropped row. */
async function readTables(db: Store, ids: bigint[]): Promise<Map<bigint, { table: string; live: boolean }>> {
  const tables = new Map<bigint, { table: string; live: boolean }>();
  for (const chunk of chunksOf(ids)) {
    const [live, dropped] = await Promise.all([
      db.selectFrom("data_objects").select(["id", "table_name"]).where("id", "in", chunk).execute(),
      db.selectFrom("dropped_objects").select(["id", "table_name"]).where("id", "in", chunk).execute(),
    ]);
    for (const row of dropped) tables.set(row.id, { table: row.table_name, live: false });
    for (const row of live) tables.set(row.id, { table: row.table_name, live: true });
  }
  return tables;
}
