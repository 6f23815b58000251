// A task's identity across runs, and the re-run that reuses completed tasks by it.
//
// Identity is a task's position in its job's graph: its parent's identity, its name, its kwargs
// with every reference replaced by the referenced task's identity, and its occurrence among the
// siblings that share all of these. Two runs of one entrypoint with the same kwargs that schedule
// the same tasks give them the same identities, whatever their ids. (A job whose function branches
// on something else — the clock, a file, a random number — may give different identities, and
// then the re-run simply runs those tasks again.)
//
// A re-run "from failed" inserts a task as COMPLETED with the old result instead of running it
// when the run it re-runs has a COMPLETED task of the same identity whose result is still whole
// (no references to other tasks, its data objects still existing) and every task it depends on was
// reused too (a dependency that runs again may produce something else).

import { createHash } from "node:crypto";
import { canonical } from "../core/canonical.js";
import type { Store } from "../store/db.js";
import type { NewChild } from "../store/transitions.js";
import { ESCAPE_KEY, collectObjectNames, collectReferences, escapedObject, soleValue } from "./references.js";

/** The entry task's identity: every run's graph grows from it. */
export const ENTRY_IDENTITY = "entry";

/** The task a completion hands its children: its identity and its job's re-run. */
export interface ParentTask {
  id: bigint;
  jobId: bigint;
  identity: string | null;
}


/** kwargs with each {"task_id"} marker replaced by {"task": <identity>} (null when unknown). */
function withIdentities(value: unknown, identityOf: (taskId: string) => string | null): unknown {
  if (Array.isArray(value)) return value.map((v) => withIdentities(v, identityOf));
  if (value === null || typeof value !== "object") return value;
  const id = soleValue(value, "task_id");
  if (typeof id === "string" && /^\d+$/.test(id)) return { task: identityOf(id) };
  const entriesOf = (object: object) => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, withIdentities(v, identityOf)]));
  const literal = escapedObject(value);
  return literal ? { [ESCAPE_KEY]: entriesOf(literal) } : entriesOf(value);
}

/**
 * Sets each child's identity, in order (a child refers only to tasks made before it). Tasks
 * outside this batch are looked up; a child of a task without identity (a run older than
 * identities) gets none, and is never reused.
 */
export async function assignIdentities(db: Store, parent: ParentTask, children: NewChild[]): Promise<void> {
  if (parent.identity === null || children.length === 0) return;
  const known = new Map<string, string | null>();
  const outside = new Set<string>();
  for (const child of children) for (const ref of collectReferences(JSON.parse(child.row.kwargs))) outside.add(ref);
  for (const child of children) outside.delete(String(child.row.id));
  if (outside.size > 0) {
    const rows = await db.selectFrom("tasks").select(["id", "identity"]).where("id", "in", [...outside].map(BigInt)).execute();
    for (const row of rows) known.set(String(row.id), row.identity);
  }
  const seen = new Map<string, number>();
  for (const child of children) {
    const shape = JSON.stringify([parent.identity, child.row.name, canonical(withIdentities(JSON.parse(child.row.kwargs), (id) => known.get(id) ?? null))]);
    const occurrence = seen.get(shape) ?? 0;
    seen.set(shape, occurrence + 1);
    const identity = createHash("sha256").update(`${shape}#${occurrence}`).digest("hex").slice(0, 32);
    child.row.identity = identity;
    known.set(String(child.row.id), identity);
  }
}

/**
 * In a re-run from failed, marks the children that reuse a completed task of the run re-run: they
 * are inserted COMPLETED with its result. Returns how many were reused.
 */
export async function reuseCompletedTasks(db: Store, parent: ParentTask, children: NewChild[], nowMs: number): Promise<number> {
  if (children.length === 0 || children.every((c) => !c.row.identity)) return 0;
  const job = await db.selectFrom("jobs").select(["rerun_of", "rerun_from"]).where("id", "=", parent.jobId).executeTakeFirst();
  if (!job?.rerun_of || job.rerun_from !== "failed") return 0;
  const identities = children.map((c) => c.row.identity).filter((i): i is string => Boolean(i));
  const old = await db
    .selectFrom("tasks")
    .select(["id", "identity", "result_ref", "completed_at"])
    .where("job_id", "=", job.rerun_of)
    .where("status", "=", "COMPLETED")
    .where("identity", "in", identities)
    .execute();
  const byIdentity = new Map(old.map((row) => [row.identity!, row]));
  // Dependencies outside this batch: reused or not.
  const outside = [...new Set(children.flatMap((c) => c.dependsOn))].filter((id) => !children.some((c) => BigInt(c.row.id) === id));
  const reusedOutside = new Set<string>();
  if (outside.length > 0) {
    const rows = await db.selectFrom("tasks").select(["id", "reused_from"]).where("id", "in", outside).execute();
    for (const row of rows) if (row.reused_from !== null) reusedOutside.add(String(row.id));
  }
  const reusedHere = new Set<string>();
  let reused = 0;
  for (const child of children) {
    const match = child.row.identity ? byIdentity.get(child.row.identity) : undefined;
    if (!match) continue;
    if (!child.dependsOn.every((dep) => reusedHere.has(String(dep)) || reusedOutside.has(String(dep)))) continue;
    const result = match.result_ref === null ? null : (JSON.parse(match.result_ref) as unknown);
    if (collectReferences(result).size > 0) continue;
    if (!(await objectsExist(db, collectObjectNames(result), match.completed_at))) continue;
    Object.assign(child.row, { status: "COMPLETED", result_ref: match.result_ref, reused_from: match.id, started_at: nowMs, completed_at: nowMs, attempt: 0 });
    reusedHere.add(String(child.row.id));
    reused += 1;
  }
  return reused;
}

/**
 * Whether a reused result's objects can still be read by name from the re-run, as they were when
 * the task completed: global and temp objects (a temp's name is its table) made no later than
 * that. A global replaced since (another run's replace: true) is another object under the name,
 * and a job-scoped name means the re-run's own object of that name, which it has not made: such a
 * task runs again.
 */
async function objectsExist(db: Store, names: Set<string>, completedAt: bigint | null): Promise<boolean> {
  if (names.size === 0) return true;
  if (completedAt === null) return false;
  const rows = await db
    .selectFrom("data_objects")
    .select(["name", "scope"])
    .where("name", "in", [...names])
    .where("scope", "in", ["global", "temp"])
    .where("created_at", "<=", completedAt)
    .execute();
  return new Set(rows.map((r) => r.name)).size === names.size;
}
