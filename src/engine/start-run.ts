// Starting a run of a job: the job row and its entry task, in one transaction. Used by run_job and
// by the scheduler, so both create runs the same way.

import type { Clock } from "../core/clock.js";
import type { IdGenerator } from "../core/ids.js";
import type { Store } from "../store/db.js";
import { insertJob } from "../store/jobs.js";
import type { JobRow } from "../store/schema.js";
import { insertTask } from "../store/tasks.js";

export interface RunRequest {
  /** The job's display name. */
  name: string;
  entrypoint: string;
  kwargs: Record<string, unknown>;
  runType: "MANUAL" | "SCHEDULED";
  preservationMode: "NONE" | "FULL";
  registeredName: string | null;
  /** Attempts of the entry task (retries + 1). */
  maxAttempts?: number;
  timeoutMs?: number | null;
}

export async function startRun(db: Store, ids: IdGenerator, clock: Clock, run: RunRequest): Promise<JobRow> {
  const now = clock.now();
  const jobId = ids.next();
  const kwargs = JSON.stringify(run.kwargs);
  const job: JobRow = {
    id: jobId,
    name: run.name,
    status: "PENDING",
    run_type: run.runType,
    preservation_mode: run.preservationMode,
    registered_name: run.registeredName,
    entrypoint: run.entrypoint,
    kwargs,
    error: null,
    result_ref: null,
    created_at: BigInt(now),
    started_at: null,
    completed_at: null,
  };
  await db.transaction().execute(async (tx) => {
    await insertJob(tx, job);
    // The entry task runs the job function itself; it builds the rest of the graph at run time.
    await insertTask(tx, {
      id: ids.next(),
      job_id: jobId,
      name: run.name,
      kind: "job",
      entrypoint: run.entrypoint,
      status: "PENDING",
      attempt: 1,
      max_attempts: run.maxAttempts ?? 1,
      kwargs,
      result_ref: null,
      error: null,
      log_path: null,
      worker_id: null,
      timeout_ms: run.timeoutMs ?? null,
      backoff_ms: 1000,
      pending_deps: 0,
      created_at: now,
      ready_at: now,
      retry_after: null,
      claimed_at: null,
      started_at: null,
      completed_at: null,
    });
  });
  // The row as created: a worker may already have claimed it, but the caller started a PENDING job.
  return job;
}
