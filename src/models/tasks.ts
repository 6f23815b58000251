// Task wire models (SPEC "Orchestration models", CONTRACT §3-§4).

import { z } from "zod";
import { TASK_STATUSES } from "../core/statuses.js";
import { Cursor, IdInput, IdString, Limit, NullableTimestamp, Page, RefId, Timestamp } from "./common.js";

export const TaskStatus = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatus>;
export { TERMINAL_TASK_STATUSES } from "../core/statuses.js";

export const TaskView = z.object({
  id: IdString,
  job_id: IdString,
  name: z.string(),
  entrypoint: z.string(),
  status: TaskStatus,
  attempt: z.number().int().nonnegative(),
  created_at: Timestamp,
  started_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  error: z.string().nullable(),
});
export type TaskView = z.infer<typeof TaskView>;

/** A task inside its job's detail: with its edges, so a client can draw the job's graph. */
export const JobTaskView = TaskView.extend({
  depends_on: z.array(IdString).describe("Tasks this one waited for (edges of the job's graph)"),
});
export type JobTaskView = z.infer<typeof JobTaskView>;

export const TaskDetail = TaskView.extend({
  kwargs: z.unknown().describe("The task's argument: usually an object; map without `as` passes each item as it is"),
  result_ref: z.unknown().describe("Plain JSON result, {object: name} or {task_id: id}; null until the task completed"),
  log_path: z.string().nullable(),
  worker_id: IdString.nullable(),
  max_attempts: z.number().int().positive(),
  retry_after: NullableTimestamp.describe("After a failed attempt with attempts left: when the backoff ends and the next attempt may start; null before any retry"),
  depends_on: z.array(IdString),
  reused_from: IdString.nullable().describe("In a re-run: the task of the run re-run whose result this one reused instead of running; null when it ran"),
});
export type TaskDetail = z.infer<typeof TaskDetail>;

export const TaskLogsView = z.object({
  task_id: IdString,
  attempt: z.number().int().nonnegative().nullable(),
  available: z.boolean().describe("False when the log file is missing or on another host"),
  path: z.string().nullable(),
  host: z.string().nullable().describe("The host name of the worker that ran the attempt, where its log is; null when no worker is known"),
  size_bytes: z.number().int().nonnegative().nullable(),
  content: z.string().describe("The last 1 MiB of the log"),
  truncated: z.boolean(),
});
export type TaskLogsView = z.infer<typeof TaskLogsView>;

/** An attempt of a task before its latest: one that failed and was retried (the job view's timeline). */
export const AttemptView = z.object({
  task_id: IdString,
  task_name: z.string(),
  attempt: z.number().int().positive(),
  worker_id: IdString.nullable(),
  started_at: NullableTimestamp,
  ended_at: Timestamp,
  error: z.string().nullable(),
});
export type AttemptView = z.infer<typeof AttemptView>;
export const AttemptPage = Page(AttemptView);
export const JobAttemptsInput = z.object({ ref: RefId, limit: Limit, cursor: Cursor.optional() });

export const TaskIdInput = z.object({ id: IdInput });
export const TaskLogsInput = z.object({
  id: IdInput,
  // CONTRACT §3: attempts count from 1, so there is no attempt 0 to read.
  attempt: z.number().int().positive().optional().describe("Defaults to the latest attempt that started"),
});
