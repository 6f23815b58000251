// Chains of derivations compiled into one SELECT (CONTRACT §5 fluent chains): every step's SELECT
// reads the one before as a subquery, so a whole chain is one ClickHouse statement with no
// intermediate tables. Column lineage is composed through the steps down to the stored objects the
// chain starts from (its leaves), which become the made object's direct upstream.

import * as derivations from "../data/derive.js";
import { type Sql, raw, sql } from "../data/sql.js";
import { invalid, isServiceError } from "../core/errors.js";
import type { ChainNode, DeriveStep } from "./data-plane.js";
import { type ColumnList, type DataScope, type ObjectRecord, checkCurrent, describeColumns, qualified, sourceOf } from "./object-registry.js";
import type { ReadSource } from "./tables.js";

/** A chain ready to run: its SELECT, what it reads, and what each column comes from. */
export interface CompiledChain {
  select: Sql;
  /** The stored objects the chain reads, each once, in first-use order. */
  leaves: ObjectRecord[];
  /** Output column → [leaf index, leaf column] pairs. */
  lineage: derivations.ColumnLineage;
  /** The ORDER BY reads of the result keep (after sort, and limit of a sorted input). */
  sortSql: string | null;
  /** The steps' operations in order, e.g. "filter+select+group_by"; one step keeps its own name. */
  operation: string;
  /** Each step's SELECT, innermost first, to tell which step a failing statement broke. */
  steps: { label: string; select: Sql }[];
}

interface Compiled {
  source: derivations.Source;
  sortSql: string | null;
  /** Output column → where it comes from among the leaves. */
  origin: derivations.ColumnLineage;
  select?: Sql;
}

const STEP_NAMES: Record<DeriveStep["op"], string> = {
  filter: "filter",
  select: "select",
  group_by: "groupBy().agg",
  join: "join",
  union: "union",
  sort: "sort",
  limit: "limit",
  distinct: "distinct",
};

function derivationOf(step: DeriveStep, sources: derivations.Source[], firstSortSql: string | null): derivations.Derivation {
  const [src] = sources as [derivations.Source, ...derivations.Source[]];
  switch (step.op) {
    case "filter":
      return derivations.filter(src, step.condition, firstSortSql);
    case "select":
      return derivations.project(src, step.outputs, firstSortSql);
    case "group_by":
      return derivations.aggregate(src, step.keys, step.aggregates);
    case "join":
      return derivations.join(src, sources[1]!, step.on, step.how, step.suffix);
    case "union":
      return derivations.union(sources);
    case "sort":
      return derivations.sort(src, step.keys);
    case "limit":
      return derivations.limit(src, step.n, firstSortSql);
    case "distinct":
      return derivations.distinct(src, step.columns, firstSortSql);
  }
}

/** Deepest allowed chain: far beyond any written by hand, far from ClickHouse's parser limits. */
const MAX_STEPS = 64;

export async function compileChain(ds: DataScope, node: ChainNode): Promise<CompiledChain> {
  const leaves: ObjectRecord[] = [];
  const steps: CompiledChain["steps"] = [];
  const operations: string[] = [];

  const compile = async (current: ChainNode): Promise<Compiled> => {
    if ("object" in current) {
      let index = leaves.findIndex((leaf) => leaf.id === current.object.id);
      // Each stored object once, however often the chain reads it (a union with itself).
      if (index < 0) {
        await checkCurrent(ds, current.object);
        index = leaves.push(current.object) - 1;
      }
      const source = await sourceOf(ds, current.object);
      return { source, sortSql: current.object.sortSql, origin: Object.fromEntries(source.columns.map((c) => [c, [[index, c]]])) };
    }
    if (steps.length >= MAX_STEPS) throw invalid(`a chain may have at most ${MAX_STEPS} steps`);
    // Inputs in order, so leaves are numbered the same way on every run.
    const inputs: Compiled[] = [];
    for (const input of current.inputs) inputs.push(await compile(input));
    const label = `step ${steps.length + 1} (${STEP_NAMES[current.step.op] ?? current.step.op})`;
    // A union compares its inputs' column types: a chain's are ClickHouse's to say (DESCRIBE plans
    // its SELECT without reading a row).
    if (current.step.op === "union") {
      for (const input of inputs) if (input.source.types === undefined && input.select) input.source = { ...input.source, types: await chainTypes(ds, input, label) };
    }
    let derivation: derivations.Derivation;
    try {
      derivation = derivationOf(current.step, inputs.map((i) => i.source), inputs[0]?.sortSql ?? null);
    } catch (error) {
      throw invalid(`${label}: ${(error as Error).message}`);
    }
    steps.push({ label, select: derivation.select });
    operations.push(current.step.op);
    const origin: derivations.ColumnLineage = {};
    for (const [column, from] of Object.entries(derivation.lineage)) {
      const pairs = from.flatMap(([input, inputColumn]) => inputs[input]?.origin[inputColumn] ?? []);
      origin[column] = pairs.filter(([leaf, c], i) => pairs.findIndex(([l2, c2]) => l2 === leaf && c2 === c) === i);
    }
    const columns = Object.keys(derivation.lineage);
    return { source: { ref: sql`(${derivation.select})`, columns }, sortSql: derivation.sortSql ?? null, origin, select: derivation.select };
  };

  const top = await compile(node);
  if (!top.select) throw invalid("a chain needs at least one step");
  return { select: top.select, leaves, lineage: top.origin, sortSql: top.sortSql, operation: operations.join("+"), steps };
}

/** A SELECT's columns and their types, as ClickHouse plans it (DESCRIBE reads no row). */
async function describeSelect(ds: DataScope, select: Sql): Promise<ColumnList> {
  const rows = await ds.columns.query<{ name: string; type: string }>(sql`DESCRIBE TABLE (${select})`);
  return rows.map((r) => ({ name: r.name, type: r.type }));
}

/** The column types of a chain's SELECT, in its columns' order. */
async function chainTypes(ds: DataScope, input: Compiled, label: string): Promise<string[]> {
  try {
    const byName = new Map((await describeSelect(ds, input.select!)).map((r) => [r.name, r.type]));
    return input.source.columns.map((c) => byName.get(c) ?? "unknown");
  } catch (error) {
    throw invalid(`${label}: ${((error as Error)?.message ?? String(error)).split("\n")[0]}`);
  }
}

/**
 * ClickHouse refused the chain's statement: names the first step whose SELECT it refuses too (each
 * step is checked alone with DESCRIBE, which plans the query without reading a row).
 */
export async function explainChainFailure(ds: DataScope, chain: CompiledChain, error: unknown): Promise<Error> {
  // Explained already (a chain's columns, read first, failed the same way): "step 1 (select): step
  // 1 (select): …" said it twice.
  if (isServiceError(error)) return error;
  const message = (error as Error)?.message ?? String(error);
  for (const step of chain.steps) {
    try {
      await describeSelect(ds, step.select);
    } catch {
      return invalid(`${step.label}: ${message.split("\n")[0]}`);
    }
  }
  return error as Error;
}

/** A stored object, or a chain read as a subquery without making anything (`chain` set). */
export async function readSourceOf(ds: DataScope, node: ChainNode): Promise<ReadSource & { chain?: CompiledChain }> {
  if ("object" in node) {
    const record = node.object;
    await checkCurrent(ds, record);
    return { from: qualified(ds, record.table), sortSql: record.sortSql, columns: () => describeColumns(ds, record) };
  }
  const chain = await compileChain(ds, node);
  let columns: Promise<ColumnList> | undefined;
  return {
    from: raw(`(${chain.select.text})`),
    sortSql: chain.sortSql,
    chain,
    columns: () =>
      (columns ??= describeSelect(ds, chain.select).catch(async (error: unknown) => {
        throw await explainChainFailure(ds, chain, error);
      })),
  };
}
