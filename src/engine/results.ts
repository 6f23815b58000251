// Reading task results for dependents: stored markers are replaced by the referenced results,
// following chains (a task whose result is a reference to another task).

import { chunksOf } from "../store/chunks.js";
import type { Store } from "../store/db.js";
import { collectReferences, substituteReferences } from "./references.js";

/** Resolved results of `ids` (and of every task their results refer to). */
export async function resolveResults(db: Store, ids: Iterable<string>): Promise<Map<string, unknown>> {
  const stored = new Map<string, unknown>();
  let wanted = [...new Set(ids)];
  // Breadth-first over references; ids only grow, so this ends.
  while (wanted.length > 0) {
    const rows = [];
    for (const chunk of chunksOf(wanted.map(BigInt))) {
      rows.push(...(await db.selectFrom("tasks").select(["id", "status", "result_ref"]).where("id", "in", chunk).execute()));
    }
    const next = new Set<string>();
    for (const row of rows) {
      if (row.status !== "COMPLETED") throw new Error(`task ${row.id} has not completed (${row.status})`);
      const value = row.result_ref === null ? null : (JSON.parse(row.result_ref) as unknown);
      stored.set(row.id.toString(), value);
      for (const ref of collectReferences(value)) if (!stored.has(ref)) next.add(ref);
    }
    for (const id of wanted) if (!stored.has(id)) throw new Error(`task ${id} does not exist`);
    wanted = [...next];
  }
  const resolved = new Map<string, unknown>();
  const resolve = (id: string, depth: number): unknown => {
    if (resolved.has(id)) return resolved.get(id);
    if (depth > 1000) throw new Error("result references nest too deeply");
    const value = stored.get(id);
    const inner = new Map([...collectReferences(value)].map((ref) => [ref, resolve(ref, depth + 1)] as const));
    const result = substituteReferences(value, inner);
    resolved.set(id, result);
    return result;
  };
  for (const id of stored.keys()) resolve(id, 0);
  return resolved;
}
