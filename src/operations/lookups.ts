// Finding the resources an operation names, or answering NotFound (code `not_found`).

import { notFound } from "../core/errors.js";
import { MAX_ID } from "../core/ids.js";
import type { Store } from "../store/db.js";
import { findJobById, findJobWithCounts, findLatestJobByName } from "../store/jobs.js";
import { findRegisteredJob } from "../store/registered-jobs.js";
import type { DataObjectRow, JobRow, RegisteredJobRow, TaskRow, UserRow, WorkerRow } from "../store/schema.js";
import { findObject, findObjectById } from "../store/data-objects.js";
import { findUserById, findUserByName } from "../store/users.js";
import { findTaskById, findTaskWithDependencies } from "../store/tasks.js";
import { findWorkerById } from "../store/workers.js";

/** A ref that is all digits is an id (CONTRACT §4 RefId). */
export const ID_PATTERN = /^\d{1,19}$/;

/** CONTRACT §4: an all-digit ref is an id, any other string the most recent job of that name. */
export async function requireJob(db: Store, ref: string): Promise<JobRow> {
  return requireByRef(ref, (id) => findJobById(db, id), (name) => findLatestJobByName(db, name), "job", "no job is named");
}

/** The job a ref names with its task counts, read together (one statement, one snapshot). */
export async function requireJobWithCounts(db: Store, ref: string): Promise<JobRow & { counts: { total: number; completed: number } }> {
  return requireByRef(ref, (id) => findJobWithCounts(db, { id }), (name) => findJobWithCounts(db, { name }), "job", "no job is named");
}

/**
 * What a ref names (CONTRACT §4): every all-digit ref is an id, however long (one past a BIGINT
 * names nothing, and is not looked up), any other string a name; NotFound saying which it was.
 */
async function requireByRef<R>(ref: string, byId: (id: bigint) => Promise<R | undefined>, byName: (name: string) => Promise<R | undefined>, what: string, noneNamed: string): Promise<R> {
  const isId = /^\d+$/.test(ref);
  const found = isId ? (ID_PATTERN.test(ref) && BigInt(ref) <= MAX_ID ? await byId(BigInt(ref)) : undefined) : await byName(ref);
  if (!found) throw notFound(isId ? `${what} ${ref} does not exist` : `${noneNamed} "${ref}"`);
  return found;
}

const taskNotFound = (id: bigint) => notFound(`task ${id} does not exist`);

export async function requireTask(db: Store, id: bigint): Promise<TaskRow> {
  return (await findTaskById(db, id)) ?? Promise.reject(taskNotFound(id));
}

/** The task and the ids it depends on (one statement). */
export async function requireTaskWithDependencies(db: Store, id: bigint): Promise<{ task: TaskRow; dependsOn: string[] }> {
  return (await findTaskWithDependencies(db, id)) ?? Promise.reject(taskNotFound(id));
}

export async function requireWorker(db: Store, id: bigint): Promise<WorkerRow> {
  const worker = await findWorkerById(db, id);
  if (!worker) throw notFound(`worker ${id} does not exist`);
  return worker;
}

export async function requireRegisteredJob(db: Store, name: string): Promise<RegisteredJobRow> {
  const registered = await findRegisteredJob(db, name);
  if (!registered) throw notFound(`no registered job is named "${name}"`);
  return registered;
}

/** CONTRACT §8: `{ref}` of /users/{ref} is a user id (all digits) or a username. */
export async function requireUser(db: Store, ref: string): Promise<UserRow> {
  // As a job ref (one of 20 digits was "no user is named").
  return requireByRef(ref, (id) => findUserById(db, id), (name) => findUserByName(db, name), "user", "no user is named");
}

/** An object ref (ObjectRef): an all-digit ref is an id, any other an object's name or table name. */
export async function requireObject(db: Store, ref: string): Promise<DataObjectRow> {
  return requireByRef(ref, (id) => findObjectById(db, id), (name) => findObject(db, name), "data object", "no data object is named");
}
