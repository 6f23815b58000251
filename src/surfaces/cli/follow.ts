// `run-job --wait` follows a job until it ends, showing progress (a bar on a terminal, plain lines
// otherwise), then prints its result or its error; `task logs --follow` prints a task's log as it
// grows. Both refetch when the event stream says something changed, and poll when there is none.

import type { StreamEvent } from "../../models/events.js";
import { type JobDetail, TERMINAL_JOB_STATUSES } from "../../models/jobs.js";
import { TERMINAL_TASK_STATUSES } from "../../models/tasks.js";
import type { AnyOperation } from "../../operations/index.js";
import type { Caller } from "./program.js";
import { type LogPiece, type LogRead, logNotice } from "./task-log-text.js";

export interface EventFilter {
  jobId?: string;
  taskId?: string;
}

/** Subscribes to changes (the event stream); resolves with how to stop, rejects when there is no stream. */
/** `onGone`: the events stopped coming though nobody closed the watch (the server went away). */
export type WatchEvents = (filter: EventFilter, onEvent: (event: StreamEvent) => void, onGone?: () => void) => Promise<() => void>;

/** Without a stream, how often to look (CONTRACT §10: polling every 2 s is the fallback). */
const FALLBACK_POLL_MS = 2_000;
/** How often a followed log is read between events. */
const LOG_FALLBACK_POLL_MS = 500;
/** With one, refetches stay at least this far apart however many events arrive. */
const MIN_REFETCH_GAP_MS = 100;

/** Wakes a follower when an event arrives, and by the clock: every `fallbackMs` with a stream, every POLL_MS without. */
async function openWakeUps(watch: WatchEvents | undefined, filter: EventFilter, fallbackMs = FALLBACK_POLL_MS, onGone?: () => void) {
  let pending = false;
  let wake: (() => void) | undefined;
  const onEvent = () => {
    pending = true;
    wake?.();
  };
  const stop = watch ? await watch(filter, onEvent, onGone).catch(() => undefined) : undefined;
  const intervalMs = stop ? fallbackMs : POLL_MS;
  let lastAt = Date.now();
  return {
    async next(): Promise<void> {
      const gap = lastAt + MIN_REFETCH_GAP_MS - Date.now();
      if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
      if (!pending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, intervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      wake = undefined;
      pending = false;
      lastAt = Date.now();
    },
    stop: () => stop?.(),
  };
}

export interface FollowIo {
  out(text: string): void;
  /** Progress goes here (stderr), so stdout carries only the result. */
  progress(text: string, sameLine: boolean): void;
  isTty: boolean;
  /** A line for the person waiting (stderr), such as the server going away. */
  notice?(text: string): void;
}

/** The poll interval when no event stream could be opened. */
const POLL_MS = 300;

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
}

export async function followJob(
  jobId: string,
  call: Caller,
  operations: ReadonlyMap<string, AnyOperation>,
  io: FollowIo,
  watch?: WatchEvents,
): Promise<JobDetail> {
  const getJob = operations.get("get_job")!;
  // Subscribed before the first look: a change between the two is never missed.
  // Killed, the server left the job RUNNING with no one to run it: said once, rather than a wait
  // that looked hung (the job goes on when a server runs again, and the wait with it).
  const gone = () => io.notice?.(`the server stopped answering; job ${jobId} goes on when a server runs again (jobhouse local start), and this wait with it (Ctrl-C leaves it)`);
  const wakeUps = await openWakeUps(watch, { jobId }, FALLBACK_POLL_MS, gone);
  let last = "";
  try {
    for (;;) {
      // The job's counts, not its page of tasks: a job of 6,000 tasks showed "1000 of 1000", and
      // each look read 1,000 tasks. The whole first page comes once, at the end.
      const job = (await call(getJob, { ref: jobId, tasks_limit: 1 })) as JobDetail;
      const { completed_tasks: done, total_tasks: total } = job;
      const line = io.isTty ? `${bar(done, total)} ${done}/${total} tasks completed  ${job.status}` : `${job.status}: ${done} of ${total} tasks completed`;
      if (line !== last) {
        io.progress(line, io.isTty);
        last = line;
      }
      if (TERMINAL_JOB_STATUSES.includes(job.status)) {
        if (io.isTty) io.progress("", false);
        return (await call(getJob, { ref: jobId })) as JobDetail;
      }
      await wakeUps.next();
    }
  } finally {
    wakeUps.stop();
  }
}


/**
 * `task logs <id> --follow`: prints the log so far, then what each attempt appends, until the task
 * ends. The file is read through get_task_logs (its last 1 MiB): only the bytes past what was
 * printed are printed, whole lines only while the task runs.
 */
export async function followTaskLog(
  taskId: string,
  call: Caller,
  operations: ReadonlyMap<string, AnyOperation>,
  write: (piece: LogPiece) => void,
  watch?: WatchEvents,
  notice: (line: string) => void = () => undefined,
  /** The reader went away (a closed pipe): following ends, as `tail -f | head` ends. */
  readerGone: () => boolean = () => false,
  /** `--attempt N`: that attempt's log only, to its end (it was ignored: the latest was followed). */
  onlyAttempt?: number,
): Promise<void> {
  const getTask = operations.get("get_task")!;
  const getLogs = operations.get("get_task_logs")!;
  // Only a server's stream tells of log lines (a process's own feed has task changes only), so
  // between events the log is looked at more often than a job is.
  const wakeUps = await openWakeUps(watch, { taskId }, LOG_FALLBACK_POLL_MS);
  let attempt: number | null = null;
  let printed = 0;
  /** The attempt whose log was said to be out of reach (once each). */
  let unreadable: number | null = null;
  let waitingSaid = false;
  try {
    for (;;) {
      // The status first: logs read after a terminal status hold everything the task wrote.
      const task = (await call(getTask, { id: taskId })) as { status: string; attempt: number };
      const { status } = task;
      // An earlier attempt than the task's own is over (a later one is refused by get_task_logs).
      const ended = TERMINAL_TASK_STATUSES.includes(status as never) || (onlyAttempt !== undefined && onlyAttempt < Number(task.attempt));
      const logs = (await call(getLogs, onlyAttempt === undefined ? { id: taskId } : { id: taskId, attempt: onlyAttempt })) as LogRead;
      // Following a task no worker has started printed nothing at all, for as long as it waited.
      if (status === "PENDING" && logs.attempt === null && !waitingSaid) {
        waitingSaid = true;
        notice(logNotice(logs, status)!);
      }
      if (logs.attempt !== attempt) {
        if (attempt !== null && logs.attempt !== null) write({ kind: "attempt", attempt: logs.attempt });
        attempt = logs.attempt;
        printed = 0;
      }
      // Started, with a path, but no file here: written on another host (CONTRACT §9). Following
      // it printed nothing and exited 0, as if the task had written nothing.
      if (!logs.available && logs.path !== null && logs.attempt !== null && unreadable !== logs.attempt && status !== "PENDING") {
        unreadable = logs.attempt;
        notice(logNotice(logs)!);
      }
      if (logs.available && logs.size_bytes !== null && logs.size_bytes > printed) {
        const bytes = Buffer.from(logs.content);
        const heldFrom = logs.size_bytes - bytes.length;
        if (printed < heldFrom) write({ kind: "skipped", attempt: logs.attempt!, bytes: heldFrom - printed });
        const from = Math.max(printed, heldFrom);
        let fresh = bytes.subarray(from - heldFrom);
        // While the task runs a line may be half written: whole lines only, the rest next time.
        if (!ended) fresh = fresh.subarray(0, fresh.lastIndexOf(0x0a) + 1);
        if (fresh.length > 0) write({ kind: "text", attempt: logs.attempt!, text: fresh.toString("utf8") });
        printed = from + fresh.length;
      }
      if (ended || readerGone()) return;
      await wakeUps.next();
    }
  } finally {
    wakeUps.stop();
  }
}

/** The job's result as a value: follows {"task_id"} references to the task that holds it. */
export async function resolveJobResult(job: JobDetail, call: Caller, operations: ReadonlyMap<string, AnyOperation>): Promise<unknown> {
  const getTask = operations.get("get_task")!;
  // Every reference, at any depth ({"check": {"task_id": …}} too), each task read once; a result
  // past the budget is printed with its references as they are.
  const results = new Map<string, Promise<unknown>>();
  let budget = 1_000;
  // A task's result names tasks of its own job: plain data of that shape (an id of another job's
  // task, or of none) is printed as the data it is. `depth` is the nesting within one result; a
  // chain of references is bounded by the budget.
  const resultOf = async (value: object, id: string): Promise<unknown> => {
    const task = (await call(getTask, { id }).catch(() => null)) as { job_id: string; result_ref: unknown } | null;
    return task?.job_id === job.id ? follow(task.result_ref, 0) : value;
  };
  const follow = async (value: unknown, depth: number): Promise<unknown> => {
    if (depth > 64 || typeof value !== "object" || value === null) return value;
    if (Array.isArray(value)) return Promise.all(value.map((item) => follow(item, depth + 1)));
    const id = (value as { task_id?: unknown }).task_id;
    if (Object.keys(value).length === 1 && typeof id === "string" && /^\d+$/.test(id)) {
      if (!results.has(id)) {
        if (budget-- <= 0) return value;
        results.set(id, resultOf(value, id));
      }
      return results.get(id);
    }
    const entries = await Promise.all(Object.entries(value).map(async ([key, item]) => [key, await follow(item, depth + 1)] as const));
    return Object.fromEntries(entries);
  };
  return follow(job.result_ref, 0);
}
