// The execution side of a process: a worker and, optionally, the background loop, wired to the
// service context. Local mode runs both inside the server (SPEC "Backend modes").

import { type BackgroundLoop, startBackgroundLoop } from "../engine/background.js";
import { dropObjectsOfJobs, sweepObjects } from "../engine/cleanup.js";
import type { EngineDeps } from "../engine/runner.js";
import { ThreadPool } from "../engine/thread-pool.js";
import { Worker } from "../engine/worker.js";
import type { OpenedService } from "./context.js";
import { describeJobFor } from "./job-describer.js";

/** How long a cancelled, timed-out or (on a signal) interrupted task is waited for: CONTRACT §3, §9. */
export const GRACE_PERIOD_MS = 5000;

export interface EngineRuntimeOptions {
  concurrency: number;
  maxTasks?: number | null;
  background: boolean;
  cancelGraceMs?: number;
  /** Keep a worker running: replace one that ended (declared LOST) while the process lives. */
  keepAlive?: boolean;
  backgroundIntervalMs?: number;
  /** Boot the task threads at start (servers), not at the first task (one-shot CLI runs). */
  warmThreads?: boolean;
}

export interface EngineRuntime {
  /** The current worker (replaced when a kept-alive worker ends). */
  worker(): Worker;
  /** Settles when the worker ended on its own (stop_worker, max_tasks) and was not replaced. */
  finished(): Promise<void>;
  /** Stops the worker (see Worker.stop: `graceMs` bounds the wait for running tasks) and the background loop. */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export async function startEngine(service: OpenedService, options: EngineRuntimeOptions): Promise<EngineRuntime> {
  const deps: EngineDeps = {
    db: service.db,
    columns: service.columns,
    ids: service.ids,
    clock: service.clock,
    config: service.config,
    log: service.log,
    // Task code runs in threads, one per slot: the worker's concurrency is the pool's size.
    threads: new ThreadPool(options.concurrency, {
      ...service.threadOptions,
      onStray: ({ jobId, taskId, entrypoint, what }) =>
        service.log.warn(`task ${taskId} (${entrypoint}) of job ${jobId} ${what}: its thread is replaced once the task it runs now ends`, {
          job_id: jobId,
          task_id: taskId,
        }),
    }),
    changes: service.changes,
    cancelGraceMs: options.cancelGraceMs ?? GRACE_PERIOD_MS,
  };
  let stopping = false;
  // Four heartbeats per SERVICE_WORKER_TIMEOUT (at most every 5 s): one late beat is never fatal.
  const heartbeatMs = Math.min(5000, (service.config.workerTimeoutS * 1000) / 4);
  // On PostgreSQL other processes' work arrives by NOTIFY, so polling is only the fallback (a lost
  // notification, a retry whose backoff ends); SQLite has no such signal across processes.
  const pollMs = service.config.sql.dialect === "postgres" ? 500 : 100;
  if (options.warmThreads) deps.threads.warm();
  let current = new Worker(deps, { concurrency: options.concurrency, maxTasks: options.maxTasks ?? null, heartbeatMs, pollMs });
  try {
    await current.start();
  } catch (error) {
    // Warmed threads keep a process alive: a worker that could not register must still exit.
    await deps.threads.close();
    throw error;
  }

  let resolveFinished: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const watch = (worker: Worker) =>
    void worker.finished().then(async () => {
      if (stopping) return;
      if (!options.keepAlive) return resolveFinished();
      service.log.warn(`worker ${worker.id} ended; starting a new one`);
      current = new Worker(deps, { concurrency: options.concurrency, maxTasks: null, heartbeatMs, pollMs });
      await current.start();
      watch(current);
    });
  watch(current);

  const background: BackgroundLoop | null = options.background
    ? startBackgroundLoop(
        {
          ...deps,
          config: service.config,
          jobs: service.jobs,
          // Retention takes a deleted job's objects with it.
          onJobsDeleted: (jobIds) => dropObjectsOfJobs(service.db, service.columns, jobIds),
          sweepObjects: () => sweepObjects(service),
          ownWorkers: () => [current.id],
          describeJob: describeJobFor(service.db),
        },
        options.backgroundIntervalMs,
      )
    : null;

  return {
    worker: () => current,
    finished: () => finished,
    async stop(stopOptions = {}) {
      stopping = true;
      await background?.stop();
      await current.stop(stopOptions.graceMs);
      await deps.threads.close();
    },
  };
}
