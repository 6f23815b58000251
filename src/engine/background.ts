// The background loop: lost-worker detection, the scheduler of registered jobs, and retention.
// Each step is one function of `now`, so tests drive it with a controllable clock.

import { rm } from "node:fs/promises";
import { FailureStreak } from "../core/failure-streak.js";
import { isConnectionFailure } from "../core/store-failures.js";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config.js";
import type { IdGenerator } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import type { Store } from "../store/db.js";
import { deleteExpiredIdempotencyKeys } from "../store/idempotency-keys.js";
import { LOGIN_FAILURE_WINDOW_MS, deleteLoginFailuresBefore } from "../store/login-failures.js";
import { DELETED_JOB_KEPT_MS, deleteJob, findExpiredJobs, pruneDeletedJobs } from "../store/jobs.js";
import { advanceSchedule, findDueSchedules } from "../store/registered-jobs.js";
import { listTasksHeldBy } from "../store/tasks.js";
import { handOnReusedObjects } from "./cleanup.js";
import { countFailedAttempts, deleteEndedWorkersBefore, findSilentWorkers, markWorkerLost, recordHeartbeat } from "../store/workers.js";
import { type FailureNotifierDeps, startFailureNotifier } from "./failure-notifier.js";
import { retryHeldAttempts } from "./runner.js";
import { nextFireTime } from "./schedule.js";
import type { RegisteredJobRow } from "../store/schema.js";
import type { ChangeFeed } from "./changes.js";
import type { JobInspector } from "./job-inspector.js";
import { type RunRequest, planRun, preservationOf, startRunIf } from "./start-run.js";

export interface BackgroundDeps {
  db: Store;
  ids: IdGenerator;
  clock: Clock;
  config: Pick<Config, "workerTimeoutS" | "jobTtlDays" | "logDir" | "taskTimeoutS" | "defaultPreservationMode" | "idempotencyWindowS">;
  log: Logger;
  /** Checks a scheduled job's module and kwargs, and reads its options (in a task thread). */
  jobs: JobInspector;
  /** Where the loop's transitions are published (a worker of this process wakes on new work). */
  changes: ChangeFeed;
  /** The failed run as its registration's webhook receives it; without it no webhook is sent. */
  describeJob?: FailureNotifierDeps["describeJob"];
  /** Hooks run after retention deleted jobs (the data plane drops their objects). */
  onJobsDeleted?: (jobIds: bigint[]) => Promise<void>;
  /** Drops temp objects of ended jobs (cancelled or failed elsewhere); where the column store lives. */
  sweepObjects?: () => Promise<number>;
  /**
   * Workers running in this very process: alive whenever this loop runs, even if a task blocked the
   * event loop past SERVICE_WORKER_TIMEOUT and delayed their heartbeat.
   */
  ownWorkers?: () => bigint[];
}

/**
 * CONTRACT §3: silent workers become LOST; their claimed and running tasks are retried or failed.
 * `watchingSinceMs`: since when the caller has seen the store answer without a break. Silence
 * counts only from then: while the store did not answer, no worker could heartbeat either, and a
 * PostgreSQL outage longer than SERVICE_WORKER_TIMEOUT made every live worker LOST (they exited,
 * and their running tasks ran twice).
 */
export async function reapLostWorkers(deps: BackgroundDeps, watchingSinceMs = -Infinity): Promise<number> {
  const now = deps.clock.now();
  const cutoff = now - deps.config.workerTimeoutS * 1000;
  if (cutoff < watchingSinceMs) return 0;
  let reaped = 0;
  const own = new Set(deps.ownWorkers?.() ?? []);
  for (const worker of await findSilentWorkers(deps.db, cutoff)) {
    if (own.has(worker.id)) {
      await recordHeartbeat(deps.db, worker.id, now);
      continue;
    }
    if (!(await markWorkerLost(deps.db, worker.id, cutoff, now))) continue;
    reaped += 1;
    // The silence measured, not the threshold: a worker that died before this process started was silent longer.
    const silentS = worker.last_heartbeat === null ? deps.config.workerTimeoutS : Math.round((now - Number(worker.last_heartbeat)) / 1000);
    deps.log.warn(`worker ${worker.id} on ${worker.hostname} (pid ${worker.pid}) is lost: no heartbeat for ${silentS} s (SERVICE_WORKER_TIMEOUT is ${deps.config.workerTimeoutS} s)`);
    await retryTasksOf(deps, worker.id);
  }
  return reaped;
}

/**
 * Workers of this host whose process is gone (a local server killed with -9) are LOST now, and
 * their tasks retried at once, instead of after SERVICE_WORKER_TIMEOUT of silence. A process that
 * still runs (a CLI command running a job) keeps its worker.
 */
export async function reapDeadLocalWorkers(deps: BackgroundDeps): Promise<number> {
  const now = deps.clock.now();
  let reaped = 0;
  // Every live worker's last heartbeat is before `now + 1`: the cutoff lets any silence qualify.
  for (const worker of await findSilentWorkers(deps.db, now + 1)) {
    if (worker.hostname !== hostname() || processAlive(Number(worker.pid))) continue;
    if (!(await markWorkerLost(deps.db, worker.id, now + 1, now))) continue;
    reaped += 1;
    deps.log.warn(`worker ${worker.id} (pid ${worker.pid}) ended with its process: retrying its tasks now`);
    await retryTasksOf(deps, worker.id);
  }
  return reaped;
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive but another user's; anything else: gone.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The claimed and running tasks of a LOST worker: retried (counting an attempt) or failed. */
async function retryTasksOf(deps: BackgroundDeps, workerId: bigint): Promise<void> {
  const held = await listTasksHeldBy(deps.db, workerId);
  const failed = await retryHeldAttempts(deps, workerId, held, (attempt) => `worker ${workerId} was lost while running attempt ${attempt}`);
  if (held.length > 0) deps.log.warn(`worker ${workerId} was lost with ${held.length} task(s): ${failed} failed as attempts (retried where attempts are left)`, { worker_id: workerId });
  await countFailedAttempts(deps.db, workerId, failed);
}

/** With overlap "skip", whether the registration already has max_active_runs runs PENDING or RUNNING. */
async function overlapsSkipped(db: Store, registered: RegisteredJobRow): Promise<boolean> {
  if (!registered.max_active_runs || registered.overlap !== "skip") return false;
  const row = await db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("registered_name", "=", registered.name)
    .where("status", "in", ["PENDING", "RUNNING"])
    .executeTakeFirstOrThrow();
  return Number(row.n) >= registered.max_active_runs;
}

/** Fires due schedules once each; missed fire times collapse into one run (CONTRACT §4). */
export async function fireDueSchedules(deps: BackgroundDeps): Promise<string[]> {
  const now = deps.clock.now();
  const fired: string[] = [];
  for (const registered of await findDueSchedules(deps.db, now)) {
    let next: number | null;
    try {
      next = nextFireTime(registered.schedule!, registered.timezone, now);
    } catch {
      next = null; // an expression that no longer parses stops firing rather than looping
    }
    // Planned first (it may load the job's module, which takes a while), then the fire time is
    // advanced and the run created in one transaction: the guard on the old fire time makes this
    // process the only one to fire it, and a process that dies in between leaves the schedule due.
    if (await overlapsSkipped(deps.db, registered)) {
      // overlap "skip": this fire is not run while max_active_runs runs are under way.
      if (await advanceSchedule(deps.db, registered.name, registered.next_run_at!, next)) {
        deps.log.info(`schedule "${registered.schedule}" of ${registered.name} skipped: ${registered.max_active_runs} run(s) already under way`);
      }
      continue;
    }
    const plan = await planScheduledRun(deps, registered);
    const job = await startRunIf(deps.db, deps.ids, deps.clock, deps.config, plan, (tx) => advanceSchedule(tx, registered.name, registered.next_run_at!, next));
    if (!job) continue;
    deps.changes.publish({ type: "job", id: job.id, name: job.name, status: job.status }, true);
    deps.log.info(`schedule "${registered.schedule}" fired ${registered.name}: job ${job.id}`);
    fired.push(registered.name);
  }
  return fired;
}

/**
 * A scheduled run is planned like a manual one (the job's retries, backoff and timeout, its kwargs
 * schema and defaults). A job whose module no longer loads still gets its run, which then fails
 * visibly at its entry task with the reason, rather than a schedule that silently stops; defaults
 * its schema now rejects (the job changed since it was registered) make a run recorded FAILED
 * with the fields named, never a run with arguments the schema refuses.
 */
async function planScheduledRun(deps: BackgroundDeps, registered: RegisteredJobRow): Promise<RunRequest> {
  try {
    return await planRun(deps.jobs, deps.config, { registered, runType: "SCHEDULED" });
  } catch (error) {
    const message = (error as Error).message;
    deps.log.warn(`scheduled run of ${registered.name} could not be planned: ${message}`);
    return {
      refusal: message.startsWith("kwargs") ? message : undefined,
      name: registered.name,
      entrypoint: registered.entrypoint,
      kwargs: JSON.parse(registered.defaults) as Record<string, unknown>,
      runType: "SCHEDULED",
      preservationMode: preservationOf(undefined, registered, deps.config),
      registeredName: registered.name,
    };
  }
}

/** Deletes terminal jobs older than SERVICE_JOB_TTL_DAYS with their tasks and log files, expired idempotency keys and failed logins. */
export async function applyRetention(deps: BackgroundDeps): Promise<number> {
  const cutoff = deps.clock.now() - deps.config.jobTtlDays * 86_400_000;
  let deleted = 0;
  for (;;) {
    const expired = await findExpiredJobs(deps.db, cutoff, 100);
    if (expired.length === 0) break;
    for (const id of expired) {
      await handOnReusedObjects(deps.db, id);
      await deleteJob(deps.db, id, deps.clock.now());
      await rm(join(deps.config.logDir, id.toString()), { recursive: true, force: true });
    }
    await deps.onJobsDeleted?.(expired);
    deleted += expired.length;
  }
  // Idempotency keys past their window name nothing any more.
  await deleteExpiredIdempotencyKeys(deps.db, deps.clock.now() - deps.config.idempotencyWindowS * 1000);
  // Nor do failed logins past theirs: a username that never logs in would keep its rows forever.
  await deleteLoginFailuresBefore(deps.db, deps.clock.now() - LOGIN_FAILURE_WINDOW_MS);
  // Nor do workers that ended before the jobs' window: every process start added a row for ever.
  await deleteEndedWorkersBefore(deps.db, cutoff);
  // A deleted job's tombstone serves the workers' log sweeps for a while, then goes.
  await pruneDeletedJobs(deps.db, deps.clock.now() - DELETED_JOB_KEPT_MS);
  return deleted;
}

export interface BackgroundLoop {
  stop(): Promise<void>;
}

/** Runs the three steps on intervals until stopped, and the failure webhooks' own loop beside them. */
export function startBackgroundLoop(deps: BackgroundDeps, intervalMs = 1000, retentionEveryMs = 3_600_000): BackgroundLoop {
  let stopped = false;
  let lastRetention = 0;
  let current: Promise<void> = Promise.resolve();
  /** Since when every tick has reached the store (see reapLostWorkers); null after one could not. */
  let reachableSince: number | null = null;
  const failures = new FailureStreak(deps.log, "background step");
  const tick = async () => {
    const startedAt = deps.clock.now();
    try {
      await reapLostWorkers(deps, reachableSince ?? startedAt);
      reachableSince ??= startedAt;
      await fireDueSchedules(deps);
      await deps.sweepObjects?.();
      if (deps.clock.now() - lastRetention >= retentionEveryMs) {
        lastRetention = deps.clock.now();
        const deleted = await applyRetention(deps);
        if (deleted > 0) deps.log.info(`retention deleted ${deleted} job(s) older than ${deps.config.jobTtlDays} days`);
      }
      failures.succeeded();
    } catch (error) {
      if (isConnectionFailure(error)) reachableSince = null;
      failures.failed(error);
    }
  };
  const timer = setInterval(() => {
    if (!stopped) current = current.then(tick);
  }, intervalMs);
  timer.unref();
  current = current.then(tick);
  const describeJob = deps.describeJob;
  const notifier = describeJob ? startFailureNotifier({ db: deps.db, clock: deps.clock, log: deps.log, describeJob }, intervalMs) : null;
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([current, notifier?.stop()]);
    },
  };
}
