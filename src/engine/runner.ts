// Runs one claimed task attempt: resolve its code and arguments, run it with a context (signal,
// logger, attempt), enforce its timeout, and record the outcome with guarded transitions.

import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config.js";
import type { IdGenerator } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import type { Store } from "../store/db.js";
import type { TaskRow } from "../store/schema.js";
import { type ClaimRequest, type ClaimResult, completeTaskAndClaim } from "../store/claims.js";
import { MAX_PENDING_NOTICES } from "../store/failure-notifications.js";
import { type SkippedTask, missingTasks } from "../store/dependencies.js";
import type { NewChild } from "../store/transitions.js";
import { recordThroughOutage, retryOnConflict } from "../store/errors.js";
import { findTaskById, statusOfAttempt } from "../store/tasks.js";
import { refreshStatisticsAfterGrowth } from "../store/statistics.js";
import { type AttemptKey, failAttempt, finishJobIfDone, returnUnstartedClaim } from "../store/transitions.js";
import type { ColumnStore } from "../data/client.js";
import { dropFailedAttemptObjects, dropFinishedTemps, dropTempsNoLongerRead, dropUnusedTemps } from "./cleanup.js";
import type { ChangeFeed } from "./changes.js";
import { dispatchPlaneCall } from "../objects/data-plane.js";
import { scopePlane } from "../objects/scope-plane.js";
import type { DataScope } from "../objects/object-registry.js";
import { settleAttempt } from "../objects/parking.js";
import { findParkedOfAttempt } from "../store/parked-objects.js";
import { collectReferences, substituteReferences } from "./references.js";
import { assignIdentities, reuseCompletedTasks } from "./task-identity.js";
import { resolveResults } from "./results.js";
import { decideRetry, stateAfterFailure } from "./retry.js";
import { AttemptLog, attemptLogPath } from "./task-log.js";
import { defaultTimeoutMsOf } from "./task-rows.js";
import { type RunHandlers, type TaskThread, ThreadCrash, type ThreadPool } from "./thread-pool.js";
import type { RunOutcome, RunRequest } from "./thread-protocol.js";
import { MODULE_CHANGED } from "./loader.js";
import { parseEntrypoint } from "./entrypoints.js";

export interface EngineDeps {
  db: Store;
  /** The column store, opened on first use (most tasks never touch it). */
  columns: () => Promise<ColumnStore>;
  ids: IdGenerator;
  clock: Clock;
  config: Pick<Config, "logDir" | "taskTimeoutS">;
  log: Logger;
  /** The threads task code runs in (one per slot of the worker's concurrency). */
  threads: ThreadPool;
  /** Where each transition this worker commits is published. */
  changes: ChangeFeed;
  /** How long a cancelled or timed-out task is waited for before it is abandoned. */
  cancelGraceMs: number;
  random?: () => number;
}

/** A failure the task code reported, carried back from its thread. */
class TaskFailure extends Error {
  constructor(
    message: string,
    readonly detail: string,
    readonly nonRetryable: boolean,
    /** The ServiceError code it carried, if any (MODULE_CHANGED: the thread's module is stale). */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface RunningAttempt {
  key: AttemptKey;
  jobId: bigint;
  controller: AbortController;
  /** Settles when the attempt's outcome is recorded (or it was abandoned). */
  done: Promise<void>;
}

class AttemptAbandoned extends Error {}

/** The attempt outlived its timeout. */
class TaskTimeout extends Error {}

/**
 * An end the engine decided (a timeout, a crashed thread, a shutdown): its message says all, and the
 * engine's own stack would only show the task's author our source files. Anything else is logged
 * with its stack: it may be a defect.
 */
const isEngineVerdict = (error: unknown) => error instanceof TaskTimeout || error instanceof ThreadCrash || error instanceof WorkerShutdown;

/**
 * The worker is shutting down (a signal) and the attempt outlived the grace period it was given: it
 * fails as an attempt, retried if it has attempts left, as a lost worker's would (CONTRACT §3), so
 * no task stays RUNNING on a STOPPED worker.
 */
class WorkerShutdown extends Error {}

/** What the worker lends an attempt: the slot it runs in. */
export interface AttemptSlot {
  /**
   * Asked as the attempt completes: the claim of the slot's next task, made in the completion's
   * own statement where the store can (see completeTaskAndClaim); undefined for none.
   */
  nextClaim(nowMs: number): ClaimRequest | undefined;
  /**
   * The outcome is recorded: whether the attempt completed the task (the worker counts its
   * completions, and asks at its next claim whether the task's job has ended: see
   * ClaimRequest.settledCandidates), and the claim asked for with what it took, if it was made.
   */
  settled(outcome: SlotOutcome): void;
}

export interface SlotOutcome {
  /** How the attempt ended, as recorded: "none" when it was abandoned or its result came too late. */
  ended: AttemptEnd;
  request?: ClaimRequest;
  claim?: ClaimResult;
}

/** Starts the attempt of a claimed task; the returned handle lets the worker cancel it. */
export function startAttempt(deps: EngineDeps, task: TaskRow, workerId: bigint, slot: AttemptSlot): RunningAttempt {
  const key: AttemptKey = { taskId: task.id, workerId, attempt: Number(task.attempt) };
  const controller = new AbortController();
  // Filled by the attempt when it asks for the slot's next claim, handed back whatever happens.
  const handoff: Omit<SlotOutcome, "ended"> = {};
  const done = runAttempt(deps, task, key, controller, slot, handoff)
    .catch((error: unknown): AttemptEnd => {
      deps.log.error(`task ${task.id} attempt ${key.attempt} could not be recorded: ${(error as Error)?.stack ?? error}`);
      return "unrecorded";
    })
    .then((ended) => slot.settled({ ended, ...handoff }));
  return { key, jobId: task.job_id, controller, done };
}

/** "unrecorded": the attempt ran, but the store did not take its outcome (it stays RUNNING there). */
export type AttemptEnd = "completed" | "failed" | "none" | "unrecorded";

async function runAttempt(
  deps: EngineDeps,
  task: TaskRow,
  key: AttemptKey,
  controller: AbortController,
  slot: AttemptSlot,
  handoff: Omit<SlotOutcome, "ended">,
): Promise<AttemptEnd> {
  const { db, clock } = deps;
  // The claim made the task RUNNING and named its log (a cancel since then is seen by the worker's
  // revocation check, and every transition below is guarded).
  const publishTask = (status: string, attempt = key.attempt, ready = false) =>
    deps.changes.publish({ type: "task", id: task.id, jobId: task.job_id, status, attempt }, ready);
  const log = new AttemptLog(task.log_path ?? attemptLogPath(deps.config.logDir, task.job_id, task.id, key.attempt));
  const started = clock.now();
  log.write("INFO", `attempt ${key.attempt} of ${Number(task.max_attempts)} of ${task.entrypoint} started on worker ${key.workerId}`);
  const objectsMade = new Set<bigint>();
  // The attempt's data scope (the column store opens on first use); its calls come from the thread.
  let scope: Promise<DataScope> | undefined;
  const dataScope = () =>
    (scope ??= deps.columns().then((columns) => ({
      db,
      columns,
      ids: deps.ids,
      clock,
      jobId: task.job_id,
      taskId: task.id,
      attempt: key.attempt,
      created: objectsMade,
    })));
  /**
   * The objects the attempt replaced, settled as it ends (objects/parking.ts): put back when it
   * failed (the replacements they take the place of are no longer among what it made), dropped
   * when it succeeded. When that fails, the background loop settles them later; meanwhile the
   * replacements must stay, or neither version would be left.
   */
  const settleReplacedObjects = async (succeeded: boolean) => {
    // A replacement is an object the attempt made: without one there is nothing parked to look up.
    if (!scope || objectsMade.size === 0) return;
    const ds = await scope;
    try {
      for (const id of await settleAttempt(ds, task.id, key.attempt, succeeded)) objectsMade.delete(id);
    } catch (error) {
      for (const parked of await findParkedOfAttempt(db, task.id, key.attempt).catch(() => [])) objectsMade.delete(parked.replacement_id);
      deps.log.warn(`task ${task.id}: the objects it replaced were not ${succeeded ? "dropped" : "put back"} (the background loop will): ${errorMessage(error)}`);
    }
  };

  let thread = await deps.threads.acquire();
  let threadReusable = false;
  try {
    // A fresh thread boots first: its boot is no part of the task's time limit.
    await thread.ready;
    // The store work around the task's code is retried through a dropped connection, as the
    // outcome is (it only reads, and sets what it finds on the children, the same each time): a
    // blip there failed the attempt with the engine's stack, a job with no retries with it.
    const kwargsJson = await recordThroughOutage(() => resolveArguments(deps, task));
    const request: RunRequest = {
      type: "run",
      kind: task.kind === "job" ? "job" : "task",
      entrypoint: task.entrypoint,
      kwargsJson,
      jobId: task.job_id,
      taskId: task.id,
      attempt: key.attempt,
      defaultTimeoutMs: defaultTimeoutMsOf(deps.config),
      codeVersion: task.code_version ?? null,
    };
    const handlers: RunHandlers = {
      log: (level, text) => log.write(level, text),
      otherVersion: (version) => warnOtherVersion(deps.log, task, version),
      data: async (call) => {
        // An attempt that timed out, was cancelled or was taken away is over, whatever its code
        // still does during the grace period: its data operations are refused, not made and
        // dropped afterwards.
        if (controller.signal.aborted) throw new Error(`this attempt is over (${abortReason(controller.signal)}): data operations are refused`);
        return dispatchPlaneCall(scopePlane(await dataScope()), call.method, call.args);
      },
    };
    let outcome: RunOutcome;
    for (let fresh = false; ; fresh = true) {
      try {
        outcome = await runWithLimits(deps, task, controller, thread, thread.run(request, handlers));
        break;
      } catch (error) {
        // The job's file changed since this thread loaded it (no task code ran): a fresh thread
        // loads the file as it is now, so a run always uses the code on disk when it starts.
        if (fresh || !(error instanceof TaskFailure && error.code === MODULE_CHANGED)) throw error;
        deps.threads.release(thread, false);
        thread = await deps.threads.acquire();
        await thread.ready;
      }
    }
    // The thread reported and is idle again: it can take the next task.
    threadReusable = true;
    const resultJson = outcome.resultJson!;
    const children = outcome.children ?? [];
    // From the stored JSON, not the live value: a DataObject carries its whole data scope.
    const references = [...collectReferences(JSON.parse(resultJson))].map(BigInt);
    // A run's priority holds for every task it schedules.
    for (const child of children) child.row.priority = task.priority;
    await recordThroughOutage(async () => {
      if (children.length > 0) {
        // Identities first (a later re-run matches by them), then what a re-run may reuse.
        const parent = { id: task.id, jobId: task.job_id, identity: task.identity };
        await assignIdentities(db, parent, children);
        await reuseCompletedTasks(db, parent, children, clock.now());
      }
      await refuseMissingReferences(db, children, references);
    });
    // The slot's next task is claimed with this completion unless cleanup must run first.
    // One instant for both: the next task never starts before this one completed.
    const now = clock.now();
    handoff.request = objectsMade.size === 0 ? slot.nextClaim(now) : undefined;
    let interrupted = false;
    const completion = await recordThroughOutage((again) => {
      // A try whose connection dropped may have committed, its claim too: the claim is not asked
      // again (a task it took is recovered by the worker's sweep for tasks it lost track of).
      interrupted ||= again;
      return completeTaskAndClaim(db, { key, resultJson, children, resultReferences: references, nowMs: now }, again ? undefined : handoff.request);
    });
    handoff.claim = completion.claim;
    // A try that committed before its answer was lost: the task is COMPLETED by this attempt.
    const completed = completion.completed || (interrupted && (await statusOfAttempt(db, key.taskId, key.workerId, key.attempt)) === "COMPLETED");
    // Its children and dependents may be ready now.
    if (completed) publishTask("COMPLETED", key.attempt, true);
    log.write("INFO", completed ? `completed in ${clock.now() - started} ms` : "finished, but the task was cancelled or reassigned meanwhile: result discarded");
    if (completed && children.length > 0) {
      // Plans for claiming these children, made with the statistics of a smaller table, are replaced.
      void refreshStatisticsAfterGrowth(db, children.length).catch((error: unknown) =>
        deps.log.debug(`task ${task.id}: the planner's statistics were not refreshed after its fan-out: ${errorMessage(error)}`),
      );
    }
    // Intermediate objects the attempt made and did not hand on are dropped now (NONE jobs). The
    // outcome is recorded: a failure here leaves them for the job's end, and must not be taken
    // for the attempt's (whose handling would drop the objects the result handed on).
    await settleReplacedObjects(completed);
    if (objectsMade.size > 0) {
      const drop = completed
        ? dropUnusedTemps(deps, task.job_id, objectsMade, resultJson + children.map((c) => c.row.kwargs).join(""))
        : dropFailedAttemptObjects(deps, task.job_id, objectsMade);
      await drop.catch((error: unknown) => deps.log.warn(`task ${task.id}: its unused temp objects are left for its job's end: ${errorMessage(error)}`));
    }
    // What it read may now be read by no one (NONE jobs); the job's end is the backstop.
    if (completed) {
      await dropTempsNoLongerRead(deps, task.job_id, kwargsJson).catch((error: unknown) =>
        deps.log.warn(`task ${task.id}: the temp objects it read are left for its job's end: ${errorMessage(error)}`),
      );
    }
    return completed ? "completed" : "none";
  } catch (error) {
    if (error instanceof TaskFailure) threadReusable = true;
    if (error instanceof AttemptAbandoned) {
      log.write("WARNING", error.message);
      return "none";
    }
    const message = errorMessage(error);
    log.write("ERROR", `failed: ${error instanceof TaskFailure ? error.detail : isEngineVerdict(error) ? message : ((error as Error)?.stack ?? message)}`);
    const retry = decideRetry({
      attempt: key.attempt,
      maxAttempts: Number(task.max_attempts),
      backoffMs: Number(task.backoff_ms),
      retryable: !(error instanceof TaskFailure && error.nonRetryable),
      nowMs: clock.now(),
      random: (deps.random ?? Math.random)(),
    });
    let interrupted = false;
    const outcome = await recordThroughOutage((again) => {
      interrupted ||= again;
      return failAttempt(db, { key, error: message, retryAtMs: retry.retryAtMs, nowMs: clock.now() }, ["RUNNING"]);
    });
    // A try that committed before its answer was lost may have ended the job's last task, and the
    // task's change is published as the store now has it (a watcher refetches, CONTRACT §10).
    if (!outcome.failed && interrupted) {
      // Only a notice: a store that stopped answering again must not turn a recorded failure into
      // an unrecorded one. (Dependents a final failure skipped show with the job's change.)
      const now = await findTaskById(db, task.id).catch(() => undefined);
      if (now && now.status !== "RUNNING") publishTask(now.status, Number(now.attempt));
      await finishJob(deps, task.job_id);
    }
    if (outcome.failed) {
      const after = stateAfterFailure(retry, key.attempt);
      publishTask(after.status, after.attempt);
      publishSkipped(deps, task.job_id, outcome.skipped);
    }
    if (outcome.failed && retry.retryAtMs !== null) log.write("INFO", `retrying in ${retry.delayMs} ms as attempt ${key.attempt + 1}`);
    // A failed drop leaves the objects for the job's end; it must not keep the job from ending.
    await settleReplacedObjects(false);
    if (objectsMade.size > 0) {
      await dropFailedAttemptObjects(deps, task.job_id, objectsMade).catch((error: unknown) =>
        deps.log.warn(`task ${task.id}: the objects of its failed attempt are left for its job's end: ${errorMessage(error)}`),
      );
    }
    if (outcome.failed && retry.retryAtMs === null && outcome.jobId !== undefined) await finishJob(deps, outcome.jobId);
    return outcome.failed ? "failed" : "none";
  } finally {
    // A thread that is still running abandoned code (timeout, cancel) or died is replaced.
    deps.threads.release(thread, threadReusable);
    log.close();
  }
}

/**
 * A reference the attempt made to a task that does not exist (a TaskRef built from an id) fails it
 * for good, naming the id: the store's foreign key would refuse it in its own words.
 */
async function refuseMissingReferences(db: Store, children: NewChild[], resultReferences: bigint[]): Promise<void> {
  const scheduled = new Set(children.map((child) => BigInt(child.row.id)));
  const named = new Set([...children.flatMap((child) => child.dependsOn), ...resultReferences].filter((id) => !scheduled.has(id)));
  if (named.size === 0) return;
  const missing = await missingTasks(db, [...named]);
  if (missing.length > 0) {
    const message = `a task reference names task ${missing[0]}, which does not exist${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ""}`;
    throw new TaskFailure(message, message, true);
  }
}

/** Only a job's entry task reports another version (task-thread.ts otherVersion): one line per such attempt. */
function warnOtherVersion(log: Logger, task: TaskRow, version: string): void {
  const { module } = parseEntrypoint(task.entrypoint);
  log.warn(`task ${task.id} of job ${task.job_id} ran this machine's copy of ${module} (version ${version}), not version ${task.code_version}, the one its run started with: the file was edited since, or this machine holds other code (every worker must hold the same: docs/DEPLOYMENT.md)`);
}

/** The stored arguments with the results of the tasks they reference in place. */
async function resolveArguments(deps: EngineDeps, task: TaskRow): Promise<string> {
  const stored = JSON.parse(task.kwargs) as unknown;
  const references = collectReferences(stored);
  if (references.size === 0) return task.kwargs;
  const results = await resolveResults(deps.db, references);
  return JSON.stringify(substituteReferences(stored, results));
}

/**
 * Waits for the thread's outcome under the task's timeout and the cancel signal. On either, the
 * thread's signal fires; code that ignores it is waited for `cancelGraceMs`, then abandoned (the
 * caller replaces its thread, which ends the code; a late result is never recorded).
 */
async function runWithLimits(deps: EngineDeps, task: TaskRow, controller: AbortController, thread: TaskThread, run: Promise<RunOutcome>): Promise<RunOutcome> {
  const timeoutMs = task.timeout_ms === null ? null : Number(task.timeout_ms);
  const timers: NodeJS.Timeout[] = [];
  const limits = new Promise<never>((_, reject) => {
    const giveUp = (reason: Error) => timers.push(setTimeout(() => reject(reason), deps.cancelGraceMs));
    if (timeoutMs !== null) {
      timers.push(
        setTimeout(() => {
          const error = new TaskTimeout(`timed out after ${timeoutMs / 1000} s`);
          controller.abort(error);
          // Code that honours the signal rejects by itself; the rest fails when the grace runs out.
          giveUp(error);
        }, timeoutMs),
      );
    }
    const onAbort = () => {
      thread.abort(abortReason(controller.signal));
      if (controller.signal.reason instanceof AttemptAbandoned) giveUp(controller.signal.reason);
      // Its grace period is over already: the attempt ends now.
      if (controller.signal.reason instanceof WorkerShutdown) reject(controller.signal.reason);
    };
    // Cancelled while its arguments were being resolved: tell the thread at once.
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([run, limits]);
    // A result that arrives after the timeout (or a cancel) fired is not a success.
    if (controller.signal.aborted) throw controller.signal.reason;
    if (!outcome.ok) {
      const error = outcome.error!;
      throw new TaskFailure(error.message, error.stack ?? error.message, error.name === "NonRetryableError", error.code);
    }
    return outcome;
  } catch (error) {
    // After a timeout, whatever the code threw, the failure is the timeout.
    if (controller.signal.aborted && controller.signal.reason instanceof Error && !(error instanceof AttemptAbandoned)) {
      throw controller.signal.reason;
    }
    throw error;
  } finally {
    timers.forEach(clearTimeout);
  }
}

/** Ends the job if its last task has ended, publishes and logs the end; null while tasks are open. */
export async function endJobIfDone(deps: Pick<EngineDeps, "db" | "clock" | "changes" | "log">, jobId: bigint): Promise<string | null> {
  const ended = await finishJobIfDone(deps.db, jobId, deps.clock.now());
  if (ended === null) return null;
  deps.changes.publish({ type: "job", id: jobId, status: ended.status });
  // One line per job end, where it is decided (SERVICE_LOG_FORMAT=json makes it a record).
  if (ended.status === "COMPLETED") deps.log.info(`job ${jobId} COMPLETED`, { job_id: jobId, status: ended.status });
  else deps.log.warn(`job ${jobId} ${ended.status}: ${ended.error ?? "no error recorded"}`, { job_id: jobId, status: ended.status, error: ended.error });
  if (ended.notice === "full") deps.log.warn(`job ${jobId}: its failure webhook is not notified, ${MAX_PENDING_NOTICES} notices already wait for delivery`, { job_id: jobId });
  return ended.status;
}

/**
 * Fails attempts a worker holds in the store but runs no more (its process was lost, or it lost
 * track of them when a connection dropped after a claim committed), each retried if it has
 * attempts left (CONTRACT §3); how many were failed.
 */
export async function retryHeldAttempts(deps: Pick<EngineDeps, "db" | "clock" | "changes" | "log">, workerId: bigint, tasks: TaskRow[], why: (attempt: number) => string): Promise<number> {
  let failed = 0;
  const now = deps.clock.now();
  for (const task of tasks) {
    const attempt = Number(task.attempt);
    const retry = decideRetry({ attempt, maxAttempts: Number(task.max_attempts), backoffMs: Number(task.backoff_ms), retryable: true, nowMs: now, random: Math.random() });
    const outcome = await retryOnConflict(() => failAttempt(deps.db, { key: { taskId: task.id, workerId, attempt }, error: why(attempt), retryAtMs: retry.retryAtMs, nowMs: now }));
    if (!outcome.failed) continue;
    failed += 1;
    deps.changes.publish({ type: "task", id: task.id, jobId: task.job_id, ...stateAfterFailure(retry, attempt) }, true);
    publishSkipped(deps, task.job_id, outcome.skipped);
    if (retry.retryAtMs === null && outcome.jobId !== undefined) await endJobIfDone(deps, outcome.jobId);
  }
  return failed;
}

/**
 * Returns claims a live worker never learnt of (their answer was lost with a connection) to
 * PENDING: no attempt ran, so none is counted, and a task with no retries left runs as it would
 * have. How many were returned.
 */
export async function returnUnstartedClaims(deps: Pick<EngineDeps, "db" | "changes">, workerId: bigint, tasks: TaskRow[]): Promise<number> {
  let returned = 0;
  for (const task of tasks) {
    const attempt = Number(task.attempt);
    const claimedAt = task.claimed_at;
    if (claimedAt === null || !(await retryOnConflict(() => returnUnstartedClaim(deps.db, { taskId: task.id, workerId, attempt }, claimedAt)))) continue;
    returned += 1;
    deps.changes.publish({ type: "task", id: task.id, jobId: task.job_id, status: "PENDING", attempt }, true);
  }
  return returned;
}

/** The dependents a final failure skipped: each ended, so each is a change (docs/EVENTS.md). */
export function publishSkipped(deps: Pick<EngineDeps, "changes">, jobId: bigint, skipped: SkippedTask[] = []): void {
  for (const { id, attempt } of skipped) deps.changes.publish({ type: "task", id, jobId, status: "SKIPPED", attempt });
}

/** Ends the job if its last task just ended, then drops its temp objects (NONE jobs). */
export async function finishJob(deps: EngineDeps, jobId: bigint): Promise<void> {
  if ((await endJobIfDone(deps, jobId)) !== null) await dropFinishedTemps(deps.db, deps.columns, jobId);
}


/** The worker calls this when the task was cancelled or taken away from it. */
export function abandonAttempt(attempt: RunningAttempt, why: string): void {
  if (!attempt.controller.signal.aborted) attempt.controller.abort(new AttemptAbandoned(why));
}

/** The worker calls this when it stops and the attempt's grace period ran out: it fails (see WorkerShutdown). */
export function interruptAttempt(attempt: RunningAttempt, why: string): void {
  if (!attempt.controller.signal.aborted) attempt.controller.abort(new WorkerShutdown(why));
}

function abortReason(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
}
