// Messages between a worker and its task threads. Task code runs in the thread; the stores stay in
// the worker's thread, so the thread asks for data operations and reports its outcome as data.

import { type ErrorKind, ServiceError } from "../core/errors.js";
import type { SharedIdState } from "../core/ids.js";
import type { TaskOptions } from "./definitions.js";
import type { NewChild } from "../store/transitions.js";

/** What a thread needs to start: the process's id state, and where job modules may come from. */
export interface ThreadSetup {
  ids: SharedIdState;
  jobRoots: readonly string[];
  jobPackages: readonly string[];
}

/** Run one attempt of a task (or a job's entry task) with arguments already resolved. */
export interface RunRequest {
  type: "run";
  kind: "job" | "task";
  entrypoint: string;
  /** The stored arguments with dependencies' results in place; {"object": name} revives in the thread. */
  kwargsJson: string;
  jobId: bigint;
  taskId: bigint;
  attempt: number;
  defaultTimeoutMs: number | null;
  /** The code version the job started with: a thread holding another version re-checks its files. */
  codeVersion: string | null;
}

/** Load an entrypoint and check that it is a job (and, given kwargs, that they fit its schema). */
export interface InspectRequest {
  type: "inspect";
  entrypoint: string;
  kwargs?: Record<string, unknown>;
  /** The kwargs are a registration's defaults: judge only the fields they give. */
  partial?: boolean;
  /** What a refusal calls the kwargs (default `kwargs`). */
  field?: string;
}

export interface AbortRequest {
  type: "abort";
  reason: string;
}

export interface DataReply {
  type: "data-reply";
  callId: number;
  ok: boolean;
  value?: unknown;
  error?: ErrorData;
}

/** Before an idle thread is terminated: end what its loaders started (see bin/loader-children.mjs). */
export interface RetireRequest {
  type: "retire";
}

export type ToThread = RunRequest | InspectRequest | AbortRequest | DataReply | RetireRequest;

/** An error as data: enough to rebuild a ServiceError or to name a task's failure. */
export interface ErrorData {
  name: string;
  message: string;
  stack?: string;
  kind?: string;
  code?: string;
}

export interface RunOutcome {
  type: "ran";
  ok: boolean;
  resultJson?: string;
  children?: NewChild[];
  error?: ErrorData;
  /** The code version the thread ran, when it is not the one the run started with. */
  ranVersion?: string;
}

export interface InspectedJob {
  name: string;
  options: Pick<TaskOptions, "retries" | "backoff_s" | "timeout_s">;
  kwargs?: Record<string, unknown>;
  /** The hash of the job's module and the local files it imports, as loaded; null for a package. */
  codeVersion: string | null;
  /** JSON Schema of the job's kwargs (input side), when it declares a schema JSON Schema can express. */
  kwargsSchema: object | null;
}

export interface InspectOutcome {
  type: "inspected";
  ok: boolean;
  /**
   * The thread holds no state from a refused module: it loaded a job (a refusal is then about the
   * kwargs) or it imported nothing new. Otherwise it is replaced.
   */
  loaded: boolean;
  job?: InspectedJob;
  error?: ErrorData;
}

export interface LogLine {
  type: "log";
  level: string;
  text: string;
}

export interface DataCall {
  type: "data";
  callId: number;
  method: string;
  args: unknown[];
}

/** Code of an attempt that has ended did something (see strayWork in task-thread.ts): replace the thread. */
export interface StrayWork {
  type: "stray";
  jobId: bigint;
  taskId: bigint;
  entrypoint: string;
  /** What it did, as the rest of a sentence after "task <id> of job <id>". */
  what: string;
}

/** The running attempt's code threw outside its promise chain: the attempt fails and the thread ends. */
export interface ThreadCrashReport {
  type: "crash";
  error: ErrorData;
}

export type FromThread = RunOutcome | InspectOutcome | LogLine | DataCall | StrayWork | ThreadCrashReport | { type: "ready" } | { type: "retired" };

/** An error as it crosses between threads (a ServiceError keeps its kind and code). */
export function toErrorData(error: unknown): ErrorData {
  if (error instanceof Error) {
    const service = error as Error & { kind?: string; code?: string };
    return { name: error.name, message: error.message || error.name, stack: error.stack, kind: service.kind, code: typeof service.code === "string" ? service.code : undefined };
  }
  const message = typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  return { name: "Error", message };
}

/** The error an ErrorData stands for: a ServiceError when it carried a kind, else a plain Error of its name. */
export function fromErrorData(data: ErrorData): Error {
  if (data.kind) return new ServiceError(data.kind as ErrorKind, data.code ?? data.kind, data.message);
  const error = new Error(data.message);
  error.name = data.name;
  return error;
}
