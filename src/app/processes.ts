// The distributed mode's other processes (CONTRACT §9): `worker start` runs the same engine as the
// local server's in-process worker, `background start` the background loop; each refuses a schema
// older than its own build or a store it cannot reach, and ends cleanly on SIGTERM/SIGINT.

import { statSync } from "node:fs";
import type { Config } from "../core/config.js";
import { invalid, isServiceError, unavailable } from "../core/errors.js";
import { openColumnStore } from "../data/client.js";
import { startBackgroundLoop } from "../engine/background.js";
import { describeJobFor } from "./job-describer.js";
import { dropObjectsOfJobs, sweepObjects } from "../engine/cleanup.js";
import { type Store, openStore } from "../store/db.js";
import { pendingMigrations } from "../store/migrate.js";
import { EXIT_START_AGAIN, type OpenedService, openService } from "./context.js";
import { GRACE_PERIOD_MS, startEngine } from "./engine-runtime.js";
import { startLogSweep } from "../engine/log-sweep.js";
import { STOP_BOUND_MS, exitIfStopHangs, holdProcessOpen, listenForStop, stepUnlessStopped } from "./signals.js";
import { checkClickHouseReachable, clickHouseUnreachable, sqlUnreachable } from "./store-reach.js";

function requireDistributed(config: Config, what: string): void {
  if (config.mode === "local") throw invalid(`${what} is for distributed mode; in local mode \`jobhouse local start\` runs it in the server process`);
}

/**
 * One line and no start when the schema lacks migrations this build needs, or a store does not
 * answer (tasks and the temp cleanup use ClickHouse: better refused now than failing each later).
 */
async function requireUsableStores(config: Config): Promise<void> {
  const db = openStore(config.sql);
  try {
    await refuseOutdatedSchema(db);
  } catch (error) {
    if (isServiceError(error)) throw error;
    throw sqlUnreachable(config, error);
  } finally {
    await db.destroy();
  }
  await checkClickHouseReachable(config);
  // Found, never made here: a mistyped name would otherwise be a database of this process's own.
  const columns = await openColumnStore(config.ch, { create: false }).catch((error: unknown) => {
    throw isServiceError(error) ? error : clickHouseUnreachable(config, error);
  });
  await columns.close();
}

/**
 * A warning for each SERVICE_JOBS_PATH folder that is not there: a mistyped root (or a comment an
 * env file kept in the value) made every task fail with "does not exist" and nothing at the start.
 */
export function warnMissingJobRoots(service: Pick<OpenedService, "config" | "log">): void {
  for (const root of service.config.jobRoots) {
    if (!isDirectory(root)) service.log.warn(`SERVICE_JOBS_PATH names ${JSON.stringify(root)}, which is not a folder on this machine: no job module can load from it`);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** One line saying to migrate, when the schema lacks migrations this build needs (CONTRACT §9). */
export async function refuseOutdatedSchema(db: Store): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0) throw unavailable(`the SQL schema is older than this build (missing ${pending.join(", ")}): run \`jobhouse migrate\` first`, "schema_outdated");
}

/** Runs a worker until a signal, stop_worker or max_tasks; resolves with the exit code. */
export async function runWorkerProcess(config: Config, options: { concurrency: number; maxTasks: number | null }): Promise<number> {
  requireDistributed(config, "`worker start`");
  const stop = listenForStop();
  if (!(await stepUnlessStopped(stop, () => requireUsableStores(config)))) return 0;
  const service = await openService(config, { longRunning: true, engine: true, boundedStatements: true });
  const release = holdProcessOpen();
  let stopSweep: (() => void) | undefined;
  try {
    if (stop.received) return 0;
    const engine = await startEngine(service, { concurrency: options.concurrency, maxTasks: options.maxTasks, background: false, warmThreads: true });
    const id = engine.worker().id;
    stopSweep = startLogSweep({ db: service.db, logDir: service.config.logDir, log: service.log });
    service.log.info(`worker ${id} started (pid ${process.pid}, concurrency ${options.concurrency}${options.maxTasks ? `, at most ${options.maxTasks} task${options.maxTasks === 1 ? "" : "s"}` : ""})`);
    warnMissingJobRoots(service);
    const why = await Promise.race([stop.signal, engine.finished().then(() => "done")]);
    // CONTRACT §9: after a signal, running tasks get the grace period; what still runs then fails
    // as an attempt and is retried elsewhere, rather than holding the process (and its tasks) for good.
    if (why !== "done") {
      service.log.info(`worker ${id} got ${why}: its running tasks get ${GRACE_PERIOD_MS / 1000} s to finish`);
      exitIfStopHangs(service.log, `worker ${id}`, GRACE_PERIOD_MS + STOP_BOUND_MS);
    }
    await engine.stop(why === "done" ? {} : { graceMs: GRACE_PERIOD_MS });
    if (engine.worker().declaredLost) {
      // Its tasks were retried elsewhere; a new start makes a new worker (a supervisor restarts it).
      service.log.warn(`worker ${id} exited: it was declared LOST (no heartbeat reached the store for SERVICE_WORKER_TIMEOUT); exit code ${EXIT_START_AGAIN}`);
      return EXIT_START_AGAIN;
    }
    service.log.info(`worker ${id} stopped`);
    return 0;
  } finally {
    stopSweep?.();
    await service.close();
    release();
  }
}

/** Runs the background loop (lost workers, schedules, retention, temp cleanup) until a signal. */
export async function runBackgroundProcess(config: Config): Promise<number> {
  requireDistributed(config, "`background start`");
  const stop = listenForStop();
  if (!(await stepUnlessStopped(stop, () => requireUsableStores(config)))) return 0;
  const service = await openService(config, { longRunning: true, boundedStatements: true });
  const release = holdProcessOpen();
  try {
    if (stop.received) return 0;
    const loop = startBackgroundLoop({
      ...service,
      onJobsDeleted: (jobIds) => dropObjectsOfJobs(service.db, service.columns, jobIds),
      sweepObjects: () => sweepObjects(service),
      describeJob: describeJobFor(service.db),
    });
    service.log.info(`background process started (pid ${process.pid})`);
    const why = await stop.signal;
    service.log.info(`background process got ${why}: stopping`);
    exitIfStopHangs(service.log, "the background process", STOP_BOUND_MS);
    await loop.stop();
    return 0;
  } finally {
    await service.close();
    release();
  }
}
