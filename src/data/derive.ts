// SELECT statements that derive a new object from others, with the column-level lineage each one
// determines. Expressions are ClickHouse SQL written by the job author (CONTRACT §5); names are
// validated and quoted, and an expression may not end the statement.

import { type Sql, ident, raw, sql } from "./sql.js";

/** A source table: its qualified name, its columns and their types. */
export interface Source {
  ref: Sql;
  columns: string[];
  types?: string[];
}

/** Which input columns an output column is computed from: [input index, input column]. */
export type ColumnLineage = Record<string, [number, string][]>;

export interface Derivation {
  select: Sql;
  lineage: ColumnLineage;
  /** An ORDER BY the result must be read with (sort keeps order for later reads). */
  sortSql?: string | null;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkColumnName(name: string): string {
  if (!IDENTIFIER.test(name) || name.length > 128) throw new TypeError(`"${name}" is not a valid column name (letters, digits, _)`);
  return name;
}

/**
 * The name of a column being made: a valid name, and none of MergeTree's own. Only where a column
 * is made: an object made before this check may have such a column, and must stay readable.
 */
export function checkNewColumnName(name: string): string {
  checkColumnName(name);
  if (VIRTUAL_COLUMN.test(name)) throw new TypeError(`"${name}" is the name of a column ClickHouse's tables have of their own: choose another`);
  return name;
}

/**
 * The virtual columns of a MergeTree table (ClickHouse 18.16's and later ones). On 18.16 the
 * virtual one wins over a real column of the same name: `_part = 5` compared the part's name.
 */
const VIRTUAL_COLUMN = /^_(?:part|part_index|part_uuid|part_offset|part_data_version|part_granule_offset|partition_id|partition_value|sample_factor|row_exists|block_number|block_offset|disk_name|table|database|distance)$/;

/** Strips string literals and quoted identifiers, so checks see only SQL structure. */
function structureOf(expression: string): string {
  return expression.replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/`(?:[^`\\]|\\.)*`/g, "``");
}

/** An author's expression: any ClickHouse SQL that stays one expression. */
export function checkExpression(expression: string): Sql {
  const structure = structureOf(expression);
  if (expression.trim() === "") throw new TypeError("an expression may not be empty");
  if (/;|--|\/\*/.test(structure)) throw new TypeError(`expression "${expression}" may not contain ';' or comments`);
  let depth = 0;
  for (const ch of structure) {
    depth += ch === "(" || ch === "[" ? 1 : ch === ")" || ch === "]" ? -1 : 0;
    if (depth < 0) throw new TypeError(`expression "${expression}" closes a parenthesis it did not open`);
    // Two expressions would be two columns: the second takes the output's name, the first none.
    if (depth === 0 && ch === ",") throw new TypeError(`expression "${expression}" is a list: give one expression (a tuple is written in parentheses)`);
  }
  if (depth !== 0) throw new TypeError(`expression "${expression}" leaves a parenthesis open`);
  return raw(expression);
}

/** Input columns an expression mentions (identifiers outside string literals). */
function columnsUsed(expression: string, available: string[]): string[] {
  const words = new Set(structureOf(expression).match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);
  for (const quoted of expression.match(/`([^`]+)`/g) ?? []) words.add(quoted.slice(1, -1));
  return available.filter((c) => words.has(c));
}

const list = (items: Sql[]) => raw(items.map((i) => i.text).join(", "));
const columnsOf = (names: string[]) => list(names.map((n) => ident(n)));
const sameColumns = (names: string[], input = 0): ColumnLineage => Object.fromEntries(names.map((n) => [n, [[input, n]]]));

/** The columns a sort (`\`v\` DESC, \`id\` ASC`) orders by. */
const sortColumnsOf = (sortSql: string): string[] => [...sortSql.matchAll(/`((?:[^`\\]|\\.)*)`/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));

/**
 * The source's sort, kept by a step whose output still holds its columns as they were: written
 * into the step's SELECT, and handed on (a read orders by it). A filter or select after a sort
 * used to lose it: ClickHouse reads a sorted subquery in parallel blocks, nearly in order.
 */
function keptSort(sortSql: string | null | undefined, kept: (column: string) => boolean): { tail: Sql; sortSql: string | null } {
  const columns = sortSql ? sortColumnsOf(sortSql) : [];
  if (!sortSql || columns.length === 0 || !columns.every(kept)) return { tail: raw(""), sortSql: null };
  return { tail: raw(` ORDER BY ${sortSql}`), sortSql };
}

export function filter(src: Source, condition: string, sortSql: string | null = null): Derivation {
  const sort = keptSort(sortSql, () => true);
  return { select: sql`SELECT * FROM ${src.ref} WHERE (${checkExpression(condition)})${sort.tail}`, lineage: sameColumns(src.columns), sortSql: sort.sortSql };
}

export function project(src: Source, outputs: Record<string, string>, sortSql: string | null = null): Derivation {
  const entries = Object.entries(outputs);
  if (entries.length === 0) throw new TypeError("select needs at least one column");
  const lineage: ColumnLineage = {};
  for (const [out, expr] of entries) lineage[out] = columnsUsed(expr, src.columns).map((c) => [0, c]);
  // Kept when each sort column is an output of its own name and value (`v: "v"`, or ["v"]).
  const same = (column: string) => entries.some(([out, expr]) => out === column && (expr.trim() === column || expr.trim() === `\`${column}\``));
  const sort = keptSort(sortSql, same);
  return { select: selectOutputs(src, [], entries, sort.tail), lineage, sortSql: sort.sortSql };
}

/** Whether an output takes the name of an input column with another value (`amount: "amount * 2"`). */
const redefinesColumn = (entries: [string, string][], columns: readonly string[]): boolean =>
  entries.some(([out, expr]) => columns.includes(out) && expr.trim() !== out && expr.trim() !== `\`${out}\``);

/**
 * `SELECT keys, outputs FROM source tail` (tail: a GROUP BY, or nothing). Outputs that redefine an
 * input column are computed under aliases no column has, then renamed one level up: in ClickHouse
 * an alias is visible everywhere in its SELECT, so `{amount: "amount * 2", plus: "amount + 1"}` in
 * one level would read the doubled amount in `plus` (and `sum(amount) AS amount` beside
 * `avg(amount)` nests one aggregate in another). Every release we run does this; only newer ones
 * have a setting against it. Without such an output the SELECT stays one level, where an output
 * may name another (`c: "b + 1"`).
 */
function selectOutputs(src: Source, keys: Sql[], entries: [string, string][], tail: Sql): Sql {
  if (!redefinesColumn(entries, src.columns)) {
    const outputs = entries.map(([out, expr]) => sql`${checkExpression(expr)} AS ${ident(checkNewColumnName(out))}`);
    return sql`SELECT ${list([...keys, ...outputs])} FROM ${src.ref}${tail}`;
  }
  const inner = entries.map(([, expr], i) => sql`${checkExpression(expr)} AS ${ident(`__jobhouse_${i}`)}`);
  const outer = entries.map(([out], i) => sql`${ident(`__jobhouse_${i}`)} AS ${ident(checkNewColumnName(out))}`);
  return sql`SELECT ${list([...keys, ...outer])} FROM (SELECT ${list([...keys, ...inner])} FROM ${src.ref}${tail})`;
}

export function aggregate(src: Source, keys: string[], aggregates: Record<string, string>): Derivation {
  keys.forEach(checkColumnName);
  const missing = keys.filter((k) => !src.columns.includes(k));
  if (missing.length) throw new TypeError(`group by: no column ${missing.join(", ")}`);
  const entries = Object.entries(aggregates);
  if (entries.length === 0) throw new TypeError("agg needs at least one aggregate, e.g. {total: \"sum(amount)\"}");
  // ClickHouse's own words ("Column id already exists") named no step of the chain.
  const clash = entries.find(([out]) => keys.includes(out));
  if (clash) throw new TypeError(`aggregate "${clash[0]}" has the name of a group key: name it otherwise (e.g. ${clash[0]}_count)`);
  const lineage: ColumnLineage = sameColumns(keys);
  for (const [out, expr] of entries) lineage[out] = columnsUsed(expr, src.columns).map((c) => [0, c]);
  const groupBy = keys.length ? sql` GROUP BY ${columnsOf(keys)}` : raw("");
  return { select: selectOutputs(src, keys.map((k) => ident(k)), entries, groupBy), lineage };
}

/** "outer" is "full" by its other common name. */
export type JoinKind = "inner" | "left" | "right" | "full" | "outer";

/**
 * Joins on columns both sides share (USING). Right-side columns whose names clash with the left get
 * `suffix`. Written with explicit subqueries and ALL strictness so ClickHouse 18.16 runs it too.
 */
export function join(left: Source, right: Source, on: string[], how: JoinKind, suffix = "_right"): Derivation {
  if (on.length === 0) throw new TypeError("join needs at least one key column");
  for (const key of on) {
    checkColumnName(key);
    if (!left.columns.includes(key) || !right.columns.includes(key)) throw new TypeError(`join key "${key}" must be a column of both objects`);
  }
  const kind = ({ inner: "INNER", left: "LEFT", right: "RIGHT", full: "FULL OUTER", outer: "FULL OUTER" } as Record<string, string>)[how];
  if (!kind) throw new TypeError(`join how must be inner, left, right or full (outer), got "${how}"`);
  const rightOnly = right.columns.filter((c) => !on.includes(c));
  const renamed = rightOnly.map((c) => [c, left.columns.includes(c) ? checkNewColumnName(c + suffix) : c] as const);
  const clash = renamed.find(([c, as]) => c !== as && left.columns.includes(as));
  if (clash) throw new TypeError(`join: "${clash[0]}" of the right object becomes "${clash[1]}", which the left object already has; pass another suffix`);
  const rightSelect = list([...on.map((k) => ident(k)), ...renamed.map(([c, as]) => (c === as ? ident(c) : sql`${ident(c)} AS ${ident(as)}`))]);
  const outputs = [...left.columns, ...renamed.map(([, as]) => as)];
  const lineage: ColumnLineage = sameColumns(left.columns);
  for (const key of on) lineage[key] = [[0, key], [1, key]];
  for (const [c, as] of renamed) lineage[as] = [[1, c]];
  const keys = columnsOf(on);
  if (kind === "INNER" || kind === "LEFT") {
    return { select: sql`SELECT ${columnsOf(outputs)} FROM (SELECT * FROM ${left.ref}) AS l ALL ${raw(kind)} JOIN (SELECT ${rightSelect} FROM ${right.ref}) AS r USING ${keys}`, lineage };
  }
  // A right-side row with a NULL key matches nothing but must be kept. ClickHouse 18.16 drops it
  // from RIGHT and FULL joins (newer releases keep it), so those rows take the other way in: the
  // join reads the right side's rows whose keys are all set, and the rest follow, joined as the
  // left side of a LEFT join (which keeps NULL keys on every release) with no rows to match.
  const anyKeyNull = raw(on.map((k) => `isNull(${ident(k).text})`).join(" OR "));
  return {
    select: sql`SELECT ${columnsOf(outputs)} FROM (SELECT * FROM ${left.ref}) AS l ALL ${raw(kind)} JOIN (SELECT ${rightSelect} FROM ${right.ref} WHERE NOT (${anyKeyNull})) AS r USING ${keys} UNION ALL SELECT ${columnsOf(outputs)} FROM (SELECT ${rightSelect} FROM ${right.ref} WHERE ${anyKeyNull}) AS r ALL LEFT JOIN (SELECT * FROM ${left.ref} WHERE 0) AS l USING ${keys}`,
    lineage,
  };
}

/**
 * The rows of every source, in the first one's column order. The sources must agree on their
 * columns' types (a chain's come from ClickHouse, see chains.ts): ClickHouse would otherwise convert
 * them, or wrap them (300 in an Int8), in silence.
 */
export function union(sources: Source[]): Derivation {
  const columns = sources[0]!.columns;
  const typeOf = (s: Source, c: string) => s.types?.[s.columns.indexOf(c)];
  for (const [i, s] of sources.entries()) {
    if (s.columns.length !== columns.length || s.columns.some((c) => !columns.includes(c))) {
      throw new TypeError(`union: object ${i + 1} has columns (${s.columns.join(", ")}), expected (${columns.join(", ")})`);
    }
    const differs = columns.find((c) => typeOf(s, c) !== typeOf(sources[0]!, c));
    if (differs) throw new TypeError(`union: column "${differs}" is ${typeOf(s, differs)} in object ${i + 1} but ${typeOf(sources[0]!, differs)} in the first`);
  }
  const parts = sources.map((s) => sql`SELECT ${columnsOf(columns)} FROM ${s.ref}`.text);
  const lineage: ColumnLineage = Object.fromEntries(columns.map((c) => [c, sources.map((_, i) => [i, c] as [number, string])]));
  return { select: raw(parts.join(" UNION ALL ")), lineage };
}

/** `keys` like "amount DESC" or "region": a column with an optional direction. */
function sortKeys(src: Source, keys: string[]): string {
  if (keys.length === 0) throw new TypeError("sort needs at least one column");
  return keys
    .map((key) => {
      const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(ASC|DESC)?\s*$/i.exec(key);
      if (!match || !src.columns.includes(match[1]!)) throw new TypeError(`sort key "${key}" must be a column, optionally followed by ASC or DESC`);
      return `${ident(match[1]!).text} ${(match[2] ?? "ASC").toUpperCase()}`;
    })
    .join(", ");
}

export function sort(src: Source, keys: string[]): Derivation {
  const order = sortKeys(src, keys);
  return { select: sql`SELECT * FROM ${src.ref} ORDER BY ${raw(order)}`, lineage: sameColumns(src.columns), sortSql: order };
}

export function limit(src: Source, n: number, sortSql: string | null): Derivation {
  // Exact integers only: 2**64 passed as "an integer" and each engine refused it in its own words.
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`limit must be a whole number from 0 to 2^53 - 1, got ${n}`);
  const order = sortSql ? raw(` ORDER BY ${sortSql}`) : raw("");
  return { select: sql`SELECT * FROM ${src.ref}${order} LIMIT ${n}`, lineage: sameColumns(src.columns), sortSql };
}

export function distinct(src: Source, columns: string[], sortSql: string | null = null): Derivation {
  const chosen = columns.length ? columns.map(checkColumnName) : src.columns;
  const missing = chosen.filter((c) => !src.columns.includes(c));
  if (missing.length) throw new TypeError(`distinct: no column ${missing.join(", ")}`);
  const sort = keptSort(sortSql, (column) => chosen.includes(column));
  return { select: sql`SELECT DISTINCT ${columnsOf(chosen)} FROM ${src.ref}${sort.tail}`, lineage: sameColumns(chosen), sortSql: sort.sortSql };
}
