// The one shape of a new task row (a job's entry task and every task scheduled inside a job), and
// the rules that turn a definition's options into its attempts, timeout and backoff.

import type { Config } from "../core/config.js";
import type { NewTaskRow } from "../store/schema.js";
import type { TaskOptions } from "./definitions.js";

/** Attempts of a task: the first plus its retries. */
const attemptsOf = (options: TaskOptions): number => 1 + Math.max(0, Math.floor(options.retries ?? 0));

/** SERVICE_TASK_TIMEOUT in milliseconds: the timeout of tasks that declare none (null: none). */
export const defaultTimeoutMsOf = (config: Pick<Config, "taskTimeoutS">): number | null =>
  config.taskTimeoutS === null ? null : config.taskTimeoutS * 1000;

/** A task's own timeout_s, else SERVICE_TASK_TIMEOUT (`defaultMs`), else none. */
const timeoutMsOf = (options: TaskOptions, defaultMs: number | null): number | null =>
  options.timeout_s !== undefined ? Math.round(options.timeout_s * 1000) : defaultMs;

/** First retry delay: the task's own backoff_s, else 1 s (doubling with jitter, see retry.ts). */
const backoffMsOf = (options: TaskOptions): number => Math.round((options.backoff_s ?? 1) * 1000);

export interface NewTask {
  id: bigint;
  jobId: bigint;
  name: string;
  kind: "job" | "task";
  entrypoint: string;
  kwargsJson: string;
  options: TaskOptions;
  defaultTimeoutMs: number | null;
  nowMs: number;
  /** The job's code version (see start-run.ts). */
  codeVersion?: string | null;
}

export function newTaskRow(t: NewTask): NewTaskRow & { id: bigint } {
  return {
    id: t.id,
    job_id: t.jobId,
    name: t.name,
    kind: t.kind,
    entrypoint: t.entrypoint,
    status: "PENDING",
    attempt: 1,
    max_attempts: attemptsOf(t.options),
    kwargs: t.kwargsJson,
    result_ref: null,
    error: null,
    log_path: null,
    worker_id: null,
    timeout_ms: timeoutMsOf(t.options, t.defaultTimeoutMs),
    backoff_ms: backoffMsOf(t.options),
    pending_deps: 0,
    created_at: t.nowMs,
    ready_at: null,
    retry_after: null,
    claimed_at: null,
    started_at: null,
    completed_at: null,
    code_version: t.codeVersion ?? null,
    gate: t.options.concurrency ? `task:${t.options.concurrency.key}` : null,
    gate_limit: t.options.concurrency?.limit ?? null,
  };
}
