// What job authors define, as the engine sees it: task and job definitions found in loaded modules.
// The SDK (`jobhouse`) builds these; the engine only reads them.

export interface TaskOptions {
  /** Extra attempts after the first failure (default 0). */
  retries?: number;
  /** First retry delay in seconds; doubles each attempt, with jitter (default 1). */
  backoff_s?: number;
  /** Per-attempt timeout in seconds (default SERVICE_TASK_TIMEOUT, else none). */
  timeout_s?: number;
  /**
   * At most `limit` tasks with this `key` run at once, across every worker and every job (a
   * warehouse that takes two connections: `{ key: "warehouse", limit: 2 }`). Enforced by the SQL
   * store when tasks are claimed, never by a process's own counters.
   */
  concurrency?: { key: string; limit: number };
}

/** The context a task function receives (CONTRACT §4). */
export interface TaskContext {
  job_id: string;
  task_id: string;
  attempt: number;
  signal: AbortSignal;
  log: TaskLogger;
}

export interface TaskLogger {
  info(...parts: unknown[]): void;
  warn(...parts: unknown[]): void;
  error(...parts: unknown[]): void;
  debug(...parts: unknown[]): void;
}

/** A zod-like schema: anything with safeParse (the job file may bring its own zod). */
export interface KwargsSchema {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

export const DEFINITION = Symbol.for("jobhouse.definition");

export interface TaskDefinition {
  readonly [DEFINITION]: "task";
  readonly name: string;
  readonly fn: (kwargs: never, ctx: TaskContext) => unknown;
  readonly options: TaskOptions;
  /** `<module>:<name>`, resolvable by a fresh process. */
  readonly entrypoint: string;
}

export interface JobOptions extends TaskOptions {
  /** Validates kwargs before a run is created (CONTRACT §4). */
  schema?: KwargsSchema;
}

export interface JobDefinition {
  readonly [DEFINITION]: "job";
  readonly name: string;
  readonly fn: (kwargs: never, ctx: TaskContext) => unknown;
  readonly options: JobOptions;
}

export const isTaskDefinition = (value: unknown): value is TaskDefinition =>
  (typeof value === "object" || typeof value === "function") && value !== null && (value as TaskDefinition)[DEFINITION] === "task";

export const isJobDefinition = (value: unknown): value is JobDefinition =>
  (typeof value === "object" || typeof value === "function") && value !== null && (value as JobDefinition)[DEFINITION] === "job";

/**
 * Tasks by `<module url>#<name>`, filled as modules load. A fresh process resolves a stored task
 * entrypoint by importing its module and looking the name up here.
 */
export const taskRegistry = new Map<string, TaskDefinition>();

/** Thrown by task code to fail at once, without the remaining retries (recognised by its name across threads). */
export class NonRetryableError extends Error {
  override name = "NonRetryableError";
}
