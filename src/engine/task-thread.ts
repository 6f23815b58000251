// The body of a task thread: loads job modules (once per thread) and runs task code, reporting log
// lines, data operations and the outcome to its worker. Nothing here touches the stores: a thread
// can be terminated at any moment (timeout, cancel, crash) without leaving them half-written.

import { parentPort, workerData } from "node:worker_threads";
import { attachIdGenerator } from "../core/ids.js";
import { systemClock } from "../core/clock.js";
import { wireBuiltins } from "./builtins.js";
import { remotePlane } from "../objects/data-plane.js";
import type { TaskContext } from "./definitions.js";
import { type Execution, currentExecution, executions, scheduleTask } from "./execution.js";
import { kwargsJsonSchema } from "./kwargs-schema.js";
import { configureJobRoots, importsAttempted, loadedVersion, resolveJob, resolveTask, validateKwargs } from "./loader.js";
import { toStoredJson } from "./references.js";
import { reviveObjects } from "./revive.js";
import { endChildren, leftBehind, trackLeftovers, watchAttempt } from "./leftovers.js";
import { captureConsole, taskLogger } from "./task-log.js";
import { type DataReply, type FromThread, type InspectRequest, type RunRequest, type ThreadSetup, type ToThread, fromErrorData, toErrorData } from "./thread-protocol.js";

const port = parentPort!;
const setup = workerData as ThreadSetup;
const ids = attachIdGenerator(setup.ids, systemClock);
configureJobRoots(setup.jobRoots, setup.jobPackages);
wireBuiltins(resolveTask, scheduleTask);
captureConsole();
trackLeftovers();

const post = (message: FromThread) => port.postMessage(message);

let nextCallId = 1;
const pendingCalls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
const callWorker = (method: string, args: unknown[]) =>
  new Promise((resolve, reject) => {
    const callId = nextCallId++;
    pendingCalls.set(callId, { resolve, reject });
    post({ type: "data", callId, method, args });
  });

function settleCall(reply: DataReply): void {
  const pending = pendingCalls.get(reply.callId);
  if (!pending) return;
  pendingCalls.delete(reply.callId);
  if (reply.ok) pending.resolve(reply.value);
  // A ServiceError from the other side keeps its kind, so task code can tell a 404 from a 422.
  else pending.reject(fromErrorData(reply.error!));
}

/** The attempt running now: its signal, and the execution its abort listeners run in. */
let running: { controller: AbortController; execution: Execution } | null = null;

/**
 * Work an attempt left running after it ended (a timer, an interval, a promise not awaited) runs on
 * in this thread, in the attempt's own async context, while the thread runs other attempts, of any
 * job. It may not write into their logs, use their data scope, or fail them: what it does is
 * refused, the worker hears of it once per attempt (`stray`), and replaces the thread as soon as
 * what runs now ends, which ends that work with it.
 */
const straysReported = new WeakSet<Execution>();
function strayWork(execution: Execution, what: string): void {
  if (straysReported.has(execution)) return;
  straysReported.add(execution);
  post({ type: "stray", taskId: execution.taskId, jobId: execution.jobId, entrypoint: execution.entrypoint, what });
}
const isRunning = (execution: Execution) => running?.execution === execution;

/**
 * An error thrown outside every promise chain (a timer's callback, an unawaited rejection). The
 * async context says whose code threw: the running attempt's fails it and ends the thread, as an
 * uncaught error always did; a finished attempt's leftover work is reported as stray instead of
 * failing whichever attempt happens to run now.
 */
function onUncaught(error: unknown): void {
  const execution = currentExecution();
  if (execution && !isRunning(execution)) {
    strayWork(execution, `left work running that threw after its attempt ended (refused): ${toErrorData(error).message}`);
    return;
  }
  post({ type: "crash", error: toErrorData(error) });
}
process.on("uncaughtException", onUncaught);
process.on("unhandledRejection", onUncaught);

async function run(request: RunRequest): Promise<void> {
  const controller = new AbortController();
  // `execution` is declared below; these closures run only once the attempt is under way.
  const write = (level: string, text: string) => {
    if (isRunning(execution)) post({ type: "log", level, text });
    else strayWork(execution, "left work running that wrote to its log after its attempt ended (refused)");
  };
  const plane = remotePlane((method, args) => {
    if (isRunning(execution)) return callWorker(method, args);
    strayWork(execution, `left work running that called data operation ${method} after its attempt ended (refused)`);
    return Promise.reject(new Error(`this task attempt has ended: work it left running may not call ${method}`));
  });
  const context: TaskContext = {
    job_id: request.jobId.toString(),
    task_id: request.taskId.toString(),
    attempt: request.attempt,
    signal: controller.signal,
    log: taskLogger(write),
  };
  const execution: Execution = {
    jobId: request.jobId,
    taskId: request.taskId,
    entrypoint: request.entrypoint,
    context,
    ids,
    nowMs: () => Date.now(),
    defaultTimeoutMs: request.defaultTimeoutMs,
    codeVersion: request.codeVersion,
    children: [],
    created: new Set(),
    write,
    plane,
  };
  running = { controller, execution };
  watchAttempt(execution);
  let ranVersion: string | undefined;
  try {
    const result = await executions.run(execution, async () => {
      const check = { expected: request.codeVersion };
      const definition = request.kind === "job" ? await resolveJob(request.entrypoint, check) : await resolveTask(request.entrypoint, check);
      ranVersion = otherVersion(request, write);
      // {"object": name} in the arguments (a task's returned object, or one named in run_job's kwargs) arrives as a DataObject.
      const kwargs = await reviveObjects(JSON.parse(request.kwargsJson), plane);
      return definition.fn(kwargs as never, context);
    });
    const resultJson = toStoredJson(result, `result of task "${request.entrypoint}"`);
    refuseHugeResult(resultJson);
    reportLeftovers(execution);
    post({ type: "ran", ok: true, resultJson, children: execution.children, ranVersion });
  } catch (error) {
    reportLeftovers(execution);
    post({ type: "ran", ok: false, error: toErrorData(error), ranVersion });
  } finally {
    running = null;
  }
}

/**
 * A result is a row of the SQL store, read whole by every get of its task and by each task that
 * depends on it: a 50 MB string was taken, and every read of the task then sent 52 MB. Data goes
 * in data objects.
 */
const MAX_RESULT_BYTES = 16 * 1024 * 1024;

function refuseHugeResult(resultJson: string): void {
  // Characters first: a string shorter than the limit in UTF-16 units can still be over it in bytes.
  if (resultJson.length * 3 <= MAX_RESULT_BYTES) return;
  const bytes = Buffer.byteLength(resultJson);
  if (bytes > MAX_RESULT_BYTES) {
    throw new Error(`its result is ${(bytes / 1024 / 1024).toFixed(1)} MiB as JSON, over the 16 MiB a result may be: return a data object (createObject) for data, or a smaller value`);
  }
}

/** Before the outcome, so the worker knows to replace this thread before it could take another task. */
function reportLeftovers(execution: Execution): void {
  const left = leftBehind(execution);
  if (left !== undefined) strayWork(execution, left);
}

/**
 * The version this thread runs, when it is not the one the run started with: this machine's copy of
 * the job's files differs from the copy the run was made from (a worker deployed apart from the
 * server). It runs what it has, as before, but says so in the attempt's log.
 */
function otherVersion(request: RunRequest, write: (level: string, text: string) => void): string | undefined {
  // The run's version is its job module's (with what it imports): only the entry task's entrypoint
  // is that module. A task defined in another file has a version of its own, never equal to it.
  if (request.kind !== "job") return undefined;
  const ran = loadedVersion(request.entrypoint);
  if (request.codeVersion === null || ran === null || ran === request.codeVersion) return undefined;
  write("WARNING", `this worker's copy of the job's files is version ${ran}, not ${request.codeVersion}, the version the run started with (edited since, or this machine holds other code than the one the run was made on): it runs its own copy`);
  return ran;
}

async function inspect(request: InspectRequest): Promise<void> {
  const importsBefore = importsAttempted();
  let loaded = false;
  try {
    // A register or run check sees the files as they are now.
    const definition = await resolveJob(request.entrypoint, { force: true });
    loaded = true;
    const kwargs = request.kwargs === undefined ? undefined : validateKwargs(definition, request.kwargs, request.partial, request.field);
    const { retries, backoff_s, timeout_s } = definition.options;
    const kwargsSchema = kwargsJsonSchema(definition.options.schema);
    post({ type: "inspected", ok: true, loaded, job: { name: definition.name, options: { retries, backoff_s, timeout_s }, kwargs, codeVersion: loadedVersion(request.entrypoint), kwargsSchema } });
  } catch (error) {
    // Refused before anything was imported (a confinement rule, a missing file): the thread is as it was.
    post({ type: "inspected", ok: false, loaded: loaded || importsAttempted() === importsBefore, error: toErrorData(error) });
  }
}

port.on("message", (message: ToThread) => {
  switch (message.type) {
    case "run":
      void run(message);
      break;
    case "inspect":
      void inspect(message);
      break;
    case "abort": {
      // Listeners run on the attempt's path, so what they write (console included) goes to its log.
      const attempt = running;
      if (attempt) {
        executions.run(attempt.execution, () => attempt.controller.abort(new Error(message.reason)));
        // Its child processes stop with it: a timed-out or cancelled task's `sleep 300` ran on.
        endChildren(attempt.execution);
      }
      break;
    }
    case "data-reply":
      settleCall(message);
      break;
    case "retire":
      void retire();
      break;
  }
});

/** Set by the thread's entry (bin/task-thread.mjs): ends the child processes its loaders started. */
const endLoaderChildren = (globalThis as { [key: symbol]: unknown })[Symbol.for("jobhouse.endLoaderChildren")] as (() => Promise<void>) | undefined;

async function retire(): Promise<void> {
  await endLoaderChildren?.();
  post({ type: "retired" });
}

post({ type: "ready" });
