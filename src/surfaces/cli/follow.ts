// `run-job --wait`: follows a job until it ends, showing progress (a bar on a terminal, plain lines
// otherwise), then prints its result or its error.

import { type JobDetail, TERMINAL_JOB_STATUSES } from "../../models/jobs.js";
import { TERMINAL_TASK_STATUSES } from "../../models/tasks.js";
import type { AnyOperation } from "../../operations/index.js";
import type { Caller } from "./program.js";

export interface FollowIo {
  out(text: string): void;
  /** Progress goes here (stderr), so stdout carries only the result. */
  progress(text: string, sameLine: boolean): void;
  isTty: boolean;
}

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
): Promise<JobDetail> {
  const getJob = operations.get("get_job")!;
  let last = "";
  for (;;) {
    const job = (await call(getJob, { ref: jobId })) as JobDetail;
    const done = job.tasks.filter((t) => TERMINAL_TASK_STATUSES.includes(t.status)).length;
    const line = io.isTty
      ? `${bar(done, job.tasks.length)} ${done}/${job.tasks.length} tasks  ${job.status}`
      : `${job.status}: ${done} of ${job.tasks.length} tasks done`;
    if (line !== last) {
      io.progress(line, io.isTty);
      last = line;
    }
    if (TERMINAL_JOB_STATUSES.includes(job.status)) {
      if (io.isTty) io.progress("", false);
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The job's result as a value: follows {"task_id"} references to the task that holds it. */
export async function resolveJobResult(job: JobDetail, call: Caller, operations: ReadonlyMap<string, AnyOperation>): Promise<unknown> {
  const getTask = operations.get("get_task")!;
  let value: unknown = job.result_ref;
  for (let depth = 0; depth < 20; depth++) {
    const id = (value as { task_id?: unknown } | null)?.task_id;
    if (typeof value !== "object" || value === null || Object.keys(value).length !== 1 || typeof id !== "string") return value;
    value = ((await call(getTask, { id })) as { result_ref: unknown }).result_ref;
  }
  return value;
}
