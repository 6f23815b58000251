// Lineage through cleanup (issue 13): from an object, walk the operation log upstream through
// dropped intermediates (temps a job dropped, replaced or deleted objects) to where the data came
// from: the files and URLs loads read and the nearest objects that still exist. Column origins
// follow the same walk. Level by level, a few statements per level, bounded in depth and size.

import { chunksOf } from "./chunks.js";
import type { Store } from "./db.js";

/** A node of the upstream graph: an object (existing or dropped) or an external source. */
export interface LineageNode {
  /** "object:<id>", "file:<path>" or "url:<address>". */
  key: string;
  kind: "object" | "file" | "url";
  id: bigint | null;
  /** The object's name, or the file's path or the URL. */
  name: string;
  table: string | null;
  scope: string | null;
  jobId: bigint | null;
  exists: boolean;
  droppedAtMs: number | null;
  /** The operation that made the object, and its SQL (objects only). */
  operation: string | null;
  sql: string | null;
  /** Files and URLs: the format they were read as, their size and when they were loaded. */
  format: string | null;
  sizeBytes: number | null;
  loadedAtMs: number | null;
}

export interface ColumnOrigin {
  key: string;
  kind: "object" | "file" | "url";
  name: string;
  column: string;
}

export interface UpstreamWalk {
  root: string;
  /** The root first, then in the order the walk reached them. */
  nodes: LineageNode[];
  /** `from` is an input of `to`. */
  edges: { from: string; to: string }[];
  /** The files and URLs reached, then the nearest existing objects. */
  sources: LineageNode[];
  /** For each column asked about, the source columns it was computed from. */
  columnOrigins: Record<string, ColumnOrigin[]>;
  /** The walk stopped at its bounds before reaching every source. */
  truncated: boolean;
}

/** A walk never goes deeper than this many operations, nor gathers more than this many nodes. */
export const WALK_LIMITS = { maxDepth: 64, maxNodes: 1_000 };

export const objectKey = (id: bigint) => `object:${id}`;

/**
 * The upstream of object `rootId`: an existing object stops the walk (it is a source, with its own
 * lineage); a dropped one is walked through. Each object is visited once, so a cycle in the log (an
 * object rebuilt from itself) ends the walk instead of looping; `columns` are the root's columns
 * whose origins are traced.
 */
export async function walkUpstream(db: Store, rootId: bigint, columns: readonly string[], limits = WALK_LIMITS, start?: WalkStart): Promise<UpstreamWalk> {
  const nodes = new Map<string, LineageNode>();
  const edges: { from: string; to: string }[] = [];
  const edgeKeys = new Set<string>();
  const addEdge = (from: string, to: string) => {
    if (edgeKeys.has(`${from}>${to}`)) return;
    edgeKeys.add(`${from}>${to}`);
    edges.push({ from, to });
  };
  // Per walked object: its column lineage rows and its external sources.
  const columnRows = new Map<string, Map<string, { input: string; column: string }[]>>();
  const filesOf = new Map<string, string[]>();

  const rootNodes = start ? [start.root] : await describeObjects(db, [{ id: rootId, name: String(rootId) }]);
  for (const node of rootNodes) nodes.set(node.key, node);
  const root = objectKey(rootId);
  let frontier = [rootId];
  let truncated = false;
  for (let depth = 0; frontier.length > 0; depth++) {
    if (depth >= limits.maxDepth || nodes.size >= limits.maxNodes) {
      truncated = true;
      break;
    }
    const { inputs, sources, lineage } = depth === 0 && start ? start.level : await readUpstreamLevel(db, frontier);
    for (const s of sources) {
      const key = `${s.kind}:${s.location}`;
      if (!nodes.has(key)) {
        nodes.set(key, {
          key,
          kind: s.kind === "url" ? "url" : "file",
          id: null,
          name: s.location,
          table: null,
          scope: null,
          jobId: null,
          exists: true,
          droppedAtMs: null,
          operation: null,
          sql: null,
          format: s.format,
          sizeBytes: s.size_bytes === null ? null : Number(s.size_bytes),
          loadedAtMs: Number(s.loaded_at),
        });
      }
      const to = objectKey(s.object_id);
      addEdge(key, to);
      filesOf.set(to, [...new Set([...(filesOf.get(to) ?? []), key])]);
    }
    for (const row of lineage) {
      const byColumn = columnRows.get(objectKey(row.object_id)) ?? new Map<string, { input: string; column: string }[]>();
      columnRows.set(objectKey(row.object_id), byColumn);
      const list = byColumn.get(row.column_name) ?? [];
      if (!list.some((l) => l.input === objectKey(row.input_id) && l.column === row.input_column)) list.push({ input: objectKey(row.input_id), column: row.input_column });
      byColumn.set(row.column_name, list);
    }
    const fresh = new Map<bigint, string>();
    for (const i of inputs) {
      addEdge(objectKey(i.input_id), objectKey(i.object_id));
      if (!nodes.has(objectKey(i.input_id))) fresh.set(i.input_id, i.input_name);
    }
    const room = limits.maxNodes - nodes.size;
    const discovered = [...fresh].slice(0, Math.max(0, room)).map(([id, name]) => ({ id, name }));
    if (discovered.length < fresh.size) truncated = true;
    const described = await describeObjects(db, discovered);
    for (const node of described) nodes.set(node.key, node);
    // Dropped objects are walked through; an existing one is where this branch's walk ends.
    frontier = described.filter((n) => !n.exists).map((n) => n.id!);
  }
  // Edges to nodes the bounds left out are dropped with them.
  const kept = edges.filter((e) => nodes.has(e.from) && nodes.has(e.to));

  const sourceNodes = [...nodes.values()].filter((n) => n.key !== root && (n.kind !== "object" || n.exists));
  const sources = [...sourceNodes.filter((n) => n.kind !== "object"), ...sourceNodes.filter((n) => n.kind === "object")];

  const trace = (key: string, column: string, seen: Set<string>): ColumnOrigin[] => {
    const node = nodes.get(key);
    const here = (n: LineageNode): ColumnOrigin => ({ key: n.key, kind: n.kind, name: n.name, column });
    if (!node) return [];
    if (key !== root && node.exists) return [here(node)];
    const rows = columnRows.get(key)?.get(column);
    // A loaded object's columns are its file's columns of the same names.
    if (!rows || rows.length === 0) return (filesOf.get(key) ?? []).map((file) => here(nodes.get(file)!));
    const marker = `${key}.${column}`;
    if (seen.has(marker)) return [];
    seen.add(marker);
    return rows.flatMap((r) => (nodes.has(r.input) ? trace(r.input, r.column, seen) : []));
  };
  const columnOrigins: Record<string, ColumnOrigin[]> = {};
  for (const column of columns) {
    const unique = new Map(trace(root, column, new Set()).map((o) => [`${o.key}.${o.column}`, o]));
    columnOrigins[column] = [...unique.values()];
  }
  return { root, nodes: [...nodes.values()], edges: kept, sources, columnOrigins, truncated };
}

export interface UpstreamLevel {
  inputs: { object_id: bigint; input_id: bigint; input_name: string }[];
  sources: { object_id: bigint; kind: string; location: string; format: string; size_bytes: bigint | null; loaded_at: bigint }[];
  lineage: { object_id: bigint; column_name: string; input_id: bigint; input_name: string; input_column: string }[];
}

/** What a caller read already (get_object reads its object's row, log and first level anyway). */
export interface WalkStart {
  root: LineageNode;
  level: UpstreamLevel;
}

/** What the walk reads about a level's objects: their inputs, their loads' sources and column lineage. */
export async function readUpstreamLevel(db: Store, ids: bigint[]): Promise<UpstreamLevel> {
  const { inputs, sources, lineage }: UpstreamLevel = { inputs: [], sources: [], lineage: [] };
  for (const chunk of chunksOf(ids)) {
    const [i, s, l] = await Promise.all([
      db.selectFrom("object_inputs").select(["object_id", "input_id", "input_name"]).where("object_id", "in", chunk).orderBy("op_id").orderBy("input_id").execute(),
      db.selectFrom("object_sources").select(["object_id", "kind", "location", "format", "size_bytes", "loaded_at"]).where("object_id", "in", chunk).orderBy("op_id").execute(),
      db.selectFrom("column_lineage").select(["object_id", "column_name", "input_id", "input_name", "input_column"]).where("object_id", "in", chunk).execute(),
    ]);
    inputs.push(...i);
    sources.push(...s);
    lineage.push(...l);
  }
  return { inputs, sources, lineage };
}

/** Objects as nodes: from the registry, else from dropped_objects, else only what the log names. */
async function describeObjects(db: Store, objects: { id: bigint; name: string }[]): Promise<LineageNode[]> {
  if (objects.length === 0) return [];
  const live = new Map<bigint, { name: string; table_name: string; scope: string; job_id: bigint | null }>();
  const dropped = new Map<bigint, { name: string; table_name: string; scope: string; job_id: bigint | null; dropped_at: bigint }>();
  const makingOp = new Map<bigint, { operation: string; sql_text: string; object_name: string }>();
  for (const chunk of chunksOf(objects.map((o) => o.id))) {
    const [l, d, ops] = await Promise.all([
      db.selectFrom("data_objects").select(["id", "name", "table_name", "scope", "job_id"]).where("id", "in", chunk).execute(),
      db.selectFrom("dropped_objects").select(["id", "name", "table_name", "scope", "job_id", "dropped_at"]).where("id", "in", chunk).execute(),
      db.selectFrom("object_ops").select(["object_id", "operation", "sql_text", "object_name"]).where("object_id", "in", chunk).orderBy("id").execute(),
    ]);
    for (const row of l) live.set(row.id, row);
    for (const row of d) dropped.set(row.id, row);
    for (const op of ops) if (isMakingOp(op, makingOp.get(op.object_id))) makingOp.set(op.object_id, op);
  }
  return objects.map(({ id, name }) => {
    const row = live.get(id) ?? dropped.get(id);
    const droppedAt = dropped.get(id)?.dropped_at;
    return objectNode(id, name, row, live.has(id), droppedAt === undefined ? null : Number(droppedAt), makingOp.get(id));
  });
}

type LoggedOp = { operation: string; sql_text: string; object_name: string };

/**
 * The making operation is the first, except that a file's load (an empty table created, then the
 * bytes appended) is named by its load. `op` comes after `current` in the log.
 */
const isMakingOp = (op: LoggedOp, current: LoggedOp | undefined): boolean => !current || (op.operation === "load" && current.operation === "create");

/** An existing object as the walk's root node, from its registry row and its log in order. */
export function liveObjectNode(row: { id: bigint; name: string; table_name: string; scope: string; job_id: bigint | null }, ops: readonly LoggedOp[]): LineageNode {
  let making: LoggedOp | undefined;
  for (const op of ops) if (isMakingOp(op, making)) making = op;
  return objectNode(row.id, row.name, row, true, null, making);
}

function objectNode(
  id: bigint,
  name: string,
  row: { name: string; table_name: string; scope: string; job_id: bigint | null } | undefined,
  exists: boolean,
  droppedAtMs: number | null,
  op: LoggedOp | undefined,
): LineageNode {
  return {
    key: objectKey(id),
    kind: "object",
    id,
    name: row?.name ?? op?.object_name ?? name,
    table: row?.table_name ?? null,
    scope: row?.scope ?? null,
    jobId: row?.job_id ?? null,
    exists,
    droppedAtMs,
    operation: op?.operation ?? null,
    sql: op?.sql_text ?? null,
    format: null,
    sizeBytes: null,
    loadedAtMs: null,
  };
}
