// The lifecycle of temp objects (CONTRACT §4-§5): a NONE job's intermediate objects are dropped as
// soon as nothing will read them; FULL jobs keep them until retention.

import type { ColumnStore } from "../data/client.js";
import { ident, sql } from "../data/sql.js";
import { chunksOf } from "../store/chunks.js";
import type { Store } from "../store/db.js";
import { findObjectsOfJob, keepWithJob, moveTempToJob } from "../store/data-objects.js";
import { findJobById } from "../store/jobs.js";
import { findReusersOfJob } from "../store/tasks.js";
import { OPEN_TASK_STATUSES, TERMINAL_JOB_STATUSES } from "../core/statuses.js";
import type { DataObjectRow } from "../store/schema.js";
import { dropObject } from "../objects/object-registry.js";
import { settleEndedAttempts } from "../objects/parking.js";
import type { Clock } from "../core/clock.js";
import type { IdGenerator } from "../core/ids.js";
import { collectObjectNames, collectReferences } from "./references.js";
import { resolveResults } from "./results.js";


async function preservesData(db: Store, jobId: bigint): Promise<boolean> {
  return (await findJobById(db, jobId))?.preservation_mode === "FULL";
}

interface CleanupDeps {
  db: Store;
  columns: () => Promise<ColumnStore>;
}

/**
 * After a successful attempt: the temp objects it made that it did not hand on (in its result or
 * in the arguments of tasks it scheduled) can be read by no one, so they go now (NONE jobs).
 */
export async function dropUnusedTemps(deps: CleanupDeps, jobId: bigint, made: Set<bigint>, handedOn: string): Promise<void> {
  if (await preservesData(deps.db, jobId)) return;
  const temps = (await findObjectsOfJob(deps.db, jobId, ["temp"])).filter((o) => made.has(o.id) && !handedOn.includes(`"${o.name}"`));
  await dropAll(deps, temps);
}

/**
 * After a failed attempt: what it made is not a result. Named objects go always (the retry makes
 * them again, and would otherwise find the name taken); temp ones unless the job keeps them (FULL).
 */
export async function dropFailedAttemptObjects(deps: CleanupDeps, jobId: bigint, made: Set<bigint>): Promise<void> {
  const keepTemps = await preservesData(deps.db, jobId);
  const rows = await deps.db.selectFrom("data_objects").selectAll().where("id", "in", [...made]).execute();
  await dropAll(deps, rows.filter((o) => o.scope !== "temp" || !keepTemps));
}

async function dropAll(deps: CleanupDeps, rows: DataObjectRow[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = await deps.columns();
  for (const object of rows) await dropObject(deps.db, columns, object);
}

/** More open tasks than this in the job, and what a task read waits for the job's end instead. */
const EARLY_DROP_MAX_OPEN_TASKS = 1000;

/**
 * After a successful attempt of a NONE job: the temp objects it read (named in its resolved
 * arguments) that no open task of the job will read and the job's result does not name are dropped
 * now, not at the job's end (CONTRACT §4: "as soon as nothing will read them").
 *
 * Why this cannot drop what is still wanted: a task that could yet hand an object on is open and
 * holds it in its arguments, directly or through the results of tasks they reference, so the scan
 * of open tasks finds it; new tasks are only made by the completion of such a holder. It runs after
 * the attempt's completion committed: of two readers finishing together, the later commit sees the
 * other's, so one of them drops the object (dropping twice is harmless). A job with very many open
 * tasks leaves it to its end, which the same rule backs up (dropFinishedTemps).
 */
export async function dropTempsNoLongerRead(deps: CleanupDeps, jobId: bigint, inputJson: string): Promise<void> {
  // CONTRACT §5: a temp object's name is its table's, t_<id>.
  const names = [...new Set(Array.from(inputJson.matchAll(/"(t_\d+)"/g), (m) => m[1]!))];
  if (names.length === 0 || (await preservesData(deps.db, jobId))) return;
  let read = await deps.db.selectFrom("data_objects").selectAll().where("job_id", "=", jobId).where("scope", "=", "temp").where("name", "in", names).execute();
  if (read.length === 0) return;
  // Only arguments that name a temp object or reference a task's result can lead to one (LIKE's _
  // matches any character: more rows, never fewer).
  const open = await deps.db
    .selectFrom("tasks")
    .select("kwargs")
    .where("job_id", "=", jobId)
    .where("status", "in", OPEN_TASK_STATUSES)
    .where((eb) => eb.or([eb("kwargs", "like", '%"t_%'), eb("kwargs", "like", '%"task_id"%')]))
    .limit(EARLY_DROP_MAX_OPEN_TASKS + 1)
    .execute();
  if (open.length > EARLY_DROP_MAX_OPEN_TASKS) return;
  const openArguments = open.map((t) => t.kwargs);
  const unnamedIn = (text: string) => (o: DataObjectRow) => !text.includes(`"${o.name}"`);
  // Named outright by an open task (a fan-out's siblings): kept without following references.
  read = read.filter(unnamedIn(openArguments.join("\n")));
  if (read.length === 0) return;
  const entry = await deps.db.selectFrom("tasks").select(["status", "result_ref"]).where("job_id", "=", jobId).where("kind", "=", "job").executeTakeFirst();
  const jobResult = entry?.status === "COMPLETED" ? (entry.result_ref ?? "") : "";
  await dropAll(deps, read.filter(unnamedIn(await withReferencedResults(deps.db, [...openArguments, jobResult]))));
}

/**
 * The JSON texts with the results of the completed tasks they reference, transitively, appended; a
 * reference to a task that has not completed adds nothing (whatever it will return, it holds now:
 * it is open, and its own arguments are among the texts).
 */
async function withReferencedResults(db: Store, texts: string[]): Promise<string> {
  const parts = [...texts];
  const seen = new Set<string>();
  let wanted = [...new Set(texts.flatMap(referencesIn))];
  while (wanted.length > 0) {
    wanted.forEach((id) => seen.add(id));
    const next = new Set<string>();
    for (const chunk of chunksOf(wanted.map(BigInt))) {
      const rows = await db.selectFrom("tasks").select(["status", "result_ref"]).where("id", "in", chunk).execute();
      for (const row of rows) {
        if (row.status !== "COMPLETED" || row.result_ref === null) continue;
        parts.push(row.result_ref);
        for (const ref of referencesIn(row.result_ref)) if (!seen.has(ref)) next.add(ref);
      }
    }
    wanted = [...next];
  }
  return parts.join("\n");
}

function referencesIn(json: string): string[] {
  if (!json.includes('"task_id"')) return [];
  try {
    return [...collectReferences(JSON.parse(json))];
  } catch {
    return [];
  }
}

/**
 * When a NONE job has ended, none of its tasks will read its temp objects again; the ones its
 * result hands to the user stay with the job: they become job-scoped (kept until the job's
 * retention ends, like a named job object), so no later sweep of temp objects takes them.
 */
export async function dropFinishedTemps(db: Store, columns: () => Promise<ColumnStore>, jobId: bigint): Promise<number> {
  const job = await findJobById(db, jobId);
  if (!job || !(TERMINAL_JOB_STATUSES as readonly string[]).includes(job.status) || job.preservation_mode === "FULL") return 0;
  const result = await jobResultText(db, jobId);
  const temps = await findObjectsOfJob(db, jobId, ["temp"]);
  const returned = temps.filter((o) => result.includes(`"${o.name}"`));
  if (returned.length > 0) await keepWithJob(db, returned.map((o) => o.id));
  const dropped = temps.filter((o) => !returned.includes(o));
  await dropAll({ db, columns }, dropped);
  return dropped.length;
}

/** The job's result with task references followed, as JSON text ("" when it has none). */
async function jobResultText(db: Store, jobId: bigint): Promise<string> {
  const entry = await db.selectFrom("tasks").select(["id", "status"]).where("job_id", "=", jobId).where("kind", "=", "job").executeTakeFirst();
  if (!entry || entry.status !== "COMPLETED") return "";
  try {
    return JSON.stringify((await resolveResults(db, [entry.id.toString()])).get(entry.id.toString()) ?? null);
  } catch {
    return ""; // part of the chain did not complete: there is no result to keep
  }
}

/**
 * Before retention deletes a job: its temp objects that a later run's reused task still names (a
 * re-run from failure reuses results, objects included) go to the newest such run and follow its
 * retention. Dropped with the job, they left the younger run's result naming an object that was gone.
 */
export async function handOnReusedObjects(db: Store, jobId: bigint): Promise<number> {
  const reusers = await findReusersOfJob(db, jobId);
  if (reusers.length === 0) return 0;
  const holderOf = new Map<string, bigint>();
  for (const { job_id, result_ref } of reusers) {
    if (result_ref === null) continue;
    for (const name of collectObjectNames(JSON.parse(result_ref))) if ((holderOf.get(name) ?? -1n) < job_id) holderOf.set(name, job_id);
  }
  let moved = 0;
  for (const object of await findObjectsOfJob(db, jobId, ["temp"])) {
    // A temp object is named by its table.
    const holder = holderOf.get(object.table_name);
    if (holder === undefined) continue;
    await moveTempToJob(db, object.id, holder);
    moved += 1;
  }
  return moved;
}

/** Retention: a deleted job's temp and job objects go with it. */
export async function dropObjectsOfJobs(db: Store, columns: () => Promise<ColumnStore>, jobIds: bigint[]): Promise<void> {
  for (const jobId of jobIds) {
    const objects = await findObjectsOfJob(db, jobId, ["temp", "job"]);
    if (objects.length === 0) continue;
    const store = await columns();
    for (const object of objects) await dropObject(db, store, object);
  }
}

/**
 * Temp objects of NONE jobs that ended without this process seeing it (cancel from a CLI, a lost
 * worker): the same end-of-job rule per job, so what a job's result hands back stays.
 */
export async function sweepFinishedTemps(db: Store, columns: () => Promise<ColumnStore>): Promise<number> {
  const rows = await db
    .selectFrom("data_objects")
    .innerJoin("jobs", "jobs.id", "data_objects.job_id")
    .select("data_objects.job_id")
    .distinct()
    .where("data_objects.scope", "=", "temp")
    .where("jobs.status", "in", TERMINAL_JOB_STATUSES)
    .where("jobs.preservation_mode", "=", "NONE")
    .limit(100)
    .execute();
  let dropped = 0;
  for (const { job_id } of rows) dropped += await dropFinishedTemps(db, columns, job_id!);
  return dropped;
}

/**
 * The background loop's sweep of objects (local start and `background start` alike): temps of
 * ended jobs, and objects parked by attempts that ended unsettled (objects/parking.ts).
 */
export async function sweepObjects(service: { db: Store; ids: IdGenerator; clock: Clock; columns: () => Promise<ColumnStore> }): Promise<number> {
  return (await sweepFinishedTemps(service.db, service.columns)) + (await settleEndedAttempts(service, service.columns));
}

/** Table names the registry places (CONTRACT §5) and the replacements built beside them. */
const OBJECT_TABLE = /^(?:t_\d+|j_\d+_[A-Za-z_][A-Za-z0-9_]*|p_[A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * After a crash (kill -9) a column-store table can outlive its making: a half-built `…_new_…`
 * replacement, a temp whose registration never committed. Tables that look like ours and that no
 * registry row names are dropped. Only safe while nothing else makes tables in this database: the
 * local server runs it at start, before its worker, holding chDB's lock.
 */
export async function dropOrphanTables(db: Store, columns: ColumnStore): Promise<string[]> {
  const tables = await columns.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${columns.database}`);
  const candidates = tables.map((t) => t.name).filter((name) => OBJECT_TABLE.test(name));
  const orphans: string[] = [];
  for (const chunk of chunksOf(candidates)) {
    const registered = new Set((await db.selectFrom("data_objects").select("table_name").where("table_name", "in", chunk).execute()).map((r) => r.table_name));
    orphans.push(...chunk.filter((name) => !registered.has(name)));
  }
  for (const name of orphans) await columns.command(sql`DROP TABLE IF EXISTS ${ident(columns.database)}.${ident(name)}`);
  return orphans;
}
