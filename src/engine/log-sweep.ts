// Task logs of deleted jobs, removed on the machine that wrote them. Retention removes a job's log
// folder where it runs, but in distributed mode the logs are on each worker's own disk (CONTRACT
// §9), which the background process cannot reach: each worker sweeps its own, of the jobs the
// store's tombstones (migration 018) say this deployment deleted, and nothing else.

import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { isCanonicalId } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import { chunksOf } from "../store/chunks.js";
import type { Store } from "../store/db.js";

/**
 * Removes the folders under `logDir` of jobs this deployment deleted; resolves with how many. A
 * folder no tombstone names stays, whatever its name: another deployment's sharing the folder (a
 * local home's logs beside a worker's), one whose store this process is not, an operator's.
 */
export async function sweepDeletedJobLogs(db: Store, logDir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(logDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  let removed = 0;
  // A job's log folder is named by its id (task-log.ts attemptLogPath).
  for (const chunk of chunksOf(names.filter(isCanonicalId), 500)) {
    const deleted = await db.selectFrom("deleted_jobs").select("job_id").where("job_id", "in", chunk.map(BigInt)).execute();
    for (const { job_id } of deleted) {
      await rm(join(logDir, job_id.toString()), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/** How often a worker process sweeps: deletions come from retention's daily window, not by the second. */
export const LOG_SWEEP_EVERY_MS = 60 * 60_000;

/** Sweeps a minute after the start, then every LOG_SWEEP_EVERY_MS; returns the stop. */
export function startLogSweep(deps: { db: Store; logDir: string; log: Logger }, everyMs = LOG_SWEEP_EVERY_MS, firstAfterMs = 60_000): () => void {
  let timer: NodeJS.Timeout;
  let stopped = false;
  const sweep = async () => {
    try {
      const removed = await sweepDeletedJobLogs(deps.db, deps.logDir);
      if (removed > 0) deps.log.info(`removed the task logs of ${removed} deleted job(s) from ${deps.logDir}`);
    } catch (error) {
      deps.log.warn(`task log sweep of ${deps.logDir} failed: ${(error as Error).message}`);
    }
    if (!stopped) timer = setTimeout(() => void sweep(), everyMs).unref();
  };
  timer = setTimeout(() => void sweep(), firstAfterMs).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
