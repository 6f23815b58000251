// The lifecycle of temp objects (CONTRACT §4-§5): a NONE job's intermediate objects are dropped as
// soon as nothing will read them; FULL jobs keep them until retention.

import type { ColumnStore } from "../data/client.js";
import type { Store } from "../store/db.js";
import { findObjectsOfJob } from "../store/data-objects.js";
import { findJobById } from "../store/jobs.js";
import { dropObject } from "./object-registry.js";

const TERMINAL = ["COMPLETED", "FAILED", "CANCELLED"];

async function preservesData(db: Store, jobId: bigint): Promise<boolean> {
  return (await findJobById(db, jobId))?.preservation_mode === "FULL";
}

/**
 * After an attempt: the temp objects it made that its result does not hand on can be read by no
 * one (nobody else has their names), so they go now.
 */
export async function dropUnusedTemps(deps: { db: Store; columns: () => Promise<ColumnStore> }, jobId: bigint, made: Set<bigint>, resultJson: string): Promise<void> {
  if (await preservesData(deps.db, jobId)) return;
  const temps = (await findObjectsOfJob(deps.db, jobId, ["temp"])).filter((o) => made.has(o.id) && !resultJson.includes(`"${o.name}"`));
  if (temps.length === 0) return;
  const columns = await deps.columns();
  for (const object of temps) await dropObject(deps.db, columns, object);
}

/** When a NONE job has ended, none of its tasks will read its temp objects again. */
export async function dropFinishedTemps(db: Store, columns: () => Promise<ColumnStore>, jobId: bigint): Promise<number> {
  const job = await findJobById(db, jobId);
  if (!job || !TERMINAL.includes(job.status) || job.preservation_mode === "FULL") return 0;
  const temps = await findObjectsOfJob(db, jobId, ["temp"]);
  if (temps.length === 0) return 0;
  const store = await columns();
  for (const object of temps) await dropObject(db, store, object);
  return temps.length;
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

/** Temp objects of NONE jobs that ended without this process seeing it (cancel from a CLI, a lost worker). */
export async function sweepFinishedTemps(db: Store, columns: () => Promise<ColumnStore>): Promise<number> {
  const rows = await db
    .selectFrom("data_objects")
    .innerJoin("jobs", "jobs.id", "data_objects.job_id")
    .selectAll("data_objects")
    .where("data_objects.scope", "=", "temp")
    .where("jobs.status", "in", TERMINAL)
    .where("jobs.preservation_mode", "=", "NONE")
    .limit(100)
    .execute();
  if (rows.length === 0) return 0;
  const store = await columns();
  for (const object of rows) await dropObject(db, store, object);
  return rows.length;
}
