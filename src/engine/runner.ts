// Runs one claimed task attempt: resolve its code and arguments, run it with a context (signal,
// logger, attempt), enforce its timeout, and record the outcome with guarded transitions.

import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config.js";
import type { IdGenerator } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import type { Store } from "../store/db.js";
import type { TaskRow } from "../store/schema.js";
import { type AttemptKey, completeTask, failAttempt, finishJobIfDone, markTaskRunning } from "../store/transitions.js";
import { wireBuiltins } from "./builtins.js";
import type { TaskContext } from "./definitions.js";
import type { ColumnStore } from "../data/client.js";
import { dropFailedAttemptObjects, dropFinishedTemps, dropUnusedTemps } from "./cleanup.js";
import { type Execution, currentExecution, executions, scheduleTask } from "./execution.js";
import { reviveObjects } from "./revive.js";
import { resolveJob, resolveTask } from "./loader.js";
import { collectReferences, substituteReferences, toStoredJson } from "./references.js";
import { resolveResults } from "./results.js";
import { backoffDelayMs } from "./retry.js";
import { AttemptLog, attemptLogPath, captureConsole } from "./task-log.js";

export interface EngineDeps {
  db: Store;
  /** The column store, opened on first use (most tasks never touch it). */
  columns: () => Promise<ColumnStore>;
  ids: IdGenerator;
  clock: Clock;
  config: Pick<Config, "logDir" | "taskTimeoutS">;
  log: Logger;
  /** How long a cancelled or timed-out task is waited for before it is abandoned. */
  cancelGraceMs: number;
  random?: () => number;
}

/** Thrown by task code to fail at once, without the remaining retries. */
export class NonRetryableError extends Error {
  override name = "NonRetryableError";
}

wireBuiltins(resolveTask, scheduleTask);

export interface RunningAttempt {
  key: AttemptKey;
  controller: AbortController;
  /** Settles when the attempt's outcome is recorded (or it was abandoned). */
  done: Promise<void>;
}

class AttemptAbandoned extends Error {}

/** Starts the attempt of a claimed task; the returned handle lets the worker cancel it. */
export function startAttempt(deps: EngineDeps, task: TaskRow, workerId: bigint, onSettled: (jobId: bigint) => void): RunningAttempt {
  const key: AttemptKey = { taskId: task.id, workerId, attempt: Number(task.attempt) };
  const controller = new AbortController();
  const done = runAttempt(deps, task, key, controller)
    .catch((error: unknown) => deps.log.error(`task ${task.id} attempt ${key.attempt} could not be recorded: ${(error as Error)?.stack ?? error}`))
    .finally(() => onSettled(task.job_id));
  return { key, controller, done };
}

async function runAttempt(deps: EngineDeps, task: TaskRow, key: AttemptKey, controller: AbortController): Promise<void> {
  const { db, clock } = deps;
  const logPath = attemptLogPath(deps.config.logDir, task.job_id, task.id, key.attempt);
  if (!(await markTaskRunning(db, key, logPath, clock.now()))) return; // cancelled or reassigned meanwhile
  captureConsole();
  const log = new AttemptLog(logPath);
  const started = clock.now();
  log.write("INFO", `attempt ${key.attempt} of ${Number(task.max_attempts)} of ${task.entrypoint} started on worker ${key.workerId}`);
  const objectsMade = new Set<bigint>();
  const context: TaskContext = {
    job_id: task.job_id.toString(),
    task_id: task.id.toString(),
    attempt: key.attempt,
    signal: controller.signal,
    log: log.logger(),
  };
  const execution: Execution = {
    jobId: task.job_id,
    taskId: task.id,
    context,
    ids: deps.ids,
    nowMs: () => clock.now(),
    defaultTimeoutMs: deps.config.taskTimeoutS === null ? null : deps.config.taskTimeoutS * 1000,
    children: [],
    created: new Set(),
    write: (level, text) => log.write(level, text),
    data: once(async () => ({
      db,
      columns: await deps.columns(),
      ids: deps.ids,
      clock,
      jobId: task.job_id,
      taskId: task.id,
      attempt: key.attempt,
      created: objectsMade,
    })),
  };

  try {
    const result = await runWithLimits(deps, task, controller, () => executions.run(execution, () => invokeCode(deps, task, context)));
    const resultJson = toStoredJson(result, `result of task "${task.name}"`);
    // From the stored JSON, not the live value: a DataObject carries its whole data scope.
    const references = [...collectReferences(JSON.parse(resultJson))].map(BigInt);
    const outcome = await completeTask(db, { key, resultJson, children: execution.children, resultReferences: references, nowMs: clock.now() });
    log.write("INFO", outcome.completed ? `completed in ${clock.now() - started} ms` : "finished, but the task was cancelled or reassigned meanwhile: result discarded");
    // Intermediate objects the attempt made and did not hand on are dropped now (NONE jobs).
    if (objectsMade.size > 0) {
      if (outcome.completed) await dropUnusedTemps(deps, task.job_id, objectsMade, resultJson + execution.children.map((c) => c.row.kwargs).join(""));
      else await dropFailedAttemptObjects(deps, task.job_id, objectsMade);
    }
    if (outcome.completed && outcome.jobId !== undefined) await finishJob(deps, outcome.jobId);
  } catch (error) {
    if (error instanceof AttemptAbandoned) {
      log.write("WARNING", error.message);
      return;
    }
    const message = errorMessage(error);
    log.write("ERROR", `failed: ${(error as Error)?.stack ?? message}`);
    const attemptsLeft = key.attempt < Number(task.max_attempts) && !(error instanceof NonRetryableError) && (error as Error)?.name !== "NonRetryableError";
    const delay = backoffDelayMs(key.attempt, Number(task.backoff_ms), (deps.random ?? Math.random)());
    const outcome = await failAttempt(db, { key, error: message, retryAtMs: attemptsLeft ? clock.now() + delay : null, nowMs: clock.now() }, ["RUNNING"]);
    if (outcome.failed && attemptsLeft) log.write("INFO", `retrying in ${delay} ms as attempt ${key.attempt + 1}`);
    if (objectsMade.size > 0) await dropFailedAttemptObjects(deps, task.job_id, objectsMade);
    if (outcome.failed && !attemptsLeft && outcome.jobId !== undefined) await finishJob(deps, outcome.jobId);
  } finally {
    log.close();
  }
}

/** Resolves the code and the arguments (dependencies' results in place of references), then calls it. */
async function invokeCode(deps: EngineDeps, task: TaskRow, context: TaskContext): Promise<unknown> {
  const definition = task.kind === "job" ? await resolveJob(task.entrypoint) : await resolveTask(task.entrypoint);
  const stored = JSON.parse(task.kwargs) as unknown;
  const references = collectReferences(stored);
  let kwargs = stored;
  if (references.size > 0) {
    const results = await resolveResults(deps.db, references);
    kwargs = substituteReferences(stored, results);
  }
  // {"object": name} in the arguments (a task's returned object, or one named in run_job's kwargs)
  // arrives as a DataObject.
  kwargs = await reviveObjects(kwargs, () => currentExecution()!.data());
  return definition.fn(kwargs as never, context);
}

/**
 * Runs the code under its timeout and the cancel signal. On either, the signal fires; code that
 * ignores it is waited for `cancelGraceMs`, then abandoned (its late result is discarded by the
 * guarded transitions).
 */
async function runWithLimits(deps: EngineDeps, task: TaskRow, controller: AbortController, run: () => Promise<unknown>): Promise<unknown> {
  const timeoutMs = task.timeout_ms === null ? null : Number(task.timeout_ms);
  const timers: NodeJS.Timeout[] = [];
  const limits = new Promise<never>((_, reject) => {
    const giveUp = (reason: Error) => timers.push(setTimeout(() => reject(reason), deps.cancelGraceMs));
    if (timeoutMs !== null) {
      timers.push(
        setTimeout(() => {
          const error = new Error(`timed out after ${timeoutMs / 1000} s`);
          controller.abort(error);
          // Code that honours the signal rejects by itself; the rest fails when the grace runs out.
          giveUp(error);
        }, timeoutMs),
      );
    }
    controller.signal.addEventListener("abort", () => {
      const reason = controller.signal.reason;
      if (reason instanceof AttemptAbandoned) giveUp(reason);
    });
  });
  try {
    const result = await Promise.race([run(), limits]);
    // A result that arrives after the timeout (or a cancel) fired is not a success.
    if (controller.signal.aborted) throw controller.signal.reason;
    return result;
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

/** Ends the job if its last task just ended, then drops its temp objects (NONE jobs). */
async function finishJob(deps: EngineDeps, jobId: bigint): Promise<void> {
  const status = await finishJobIfDone(deps.db, jobId, deps.clock.now());
  if (status !== null) await dropFinishedTemps(deps.db, deps.columns, jobId);
}

const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let value: Promise<T> | undefined;
  return () => (value ??= make());
};

/** The worker calls this when the task was cancelled or taken away from it. */
export function abandonAttempt(attempt: RunningAttempt, why: string): void {
  if (!attempt.controller.signal.aborted) attempt.controller.abort(new AttemptAbandoned(why));
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
}
