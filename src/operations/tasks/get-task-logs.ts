// get_task_logs: the last 1 MiB of a task attempt's log file (CONTRACT §4 TaskLogsView).

import { open, stat } from "node:fs/promises";
import { TaskLogsInput, TaskLogsView } from "../../models/tasks.js";
import { notFound } from "../../core/errors.js";
import { leadingContinuationBytes } from "../../core/utf8.js";
import { attemptLogPath, earlierAttemptLogPath } from "../../engine/task-log.js";
import { findEarlierAttempt } from "../../store/attempts.js";
import { findWorkerById } from "../../store/workers.js";
import { defineOperation } from "../define.js";
import { requireTask } from "../lookups.js";

export const LOG_TAIL_BYTES = 1024 * 1024;

export const getTaskLogs = defineOperation({
  name: "get_task_logs",
  summary: "Read a task's log (the latest attempt unless one is named); available is false when the file is missing",
  mutates: false,
  access: "viewer",
  mcp: false,
  input: TaskLogsInput,
  output: TaskLogsView,
  http: { method: "GET", path: "/tasks/:id/logs" },
  cli: { command: "task logs <id>", examples: ["jobhouse task logs 912370881995911168 --follow", "jobhouse task logs 912370881995911168 --attempt 1"], followLog: true, view: "log" },
  async handler({ id, attempt }, { db, config }) {
    const task = await requireTask(db, id);
    // The task's attempt number is its latest, started or waiting to retry: a later one never was.
    if (attempt !== undefined && attempt > Number(task.attempt)) throw notFound(`task ${id} has no attempt ${attempt}: it is at attempt ${Number(task.attempt)}`);
    // log_path names the latest attempt that started (a task waiting to retry has a higher attempt
    // number than its newest log); any other attempt's file is found by its number.
    const latest = task.log_path ? Number(/(\d+)\.log$/.exec(task.log_path)?.[1]) : null;
    const chosen = attempt ?? latest;
    // An attempt after the latest that started (a retry still waiting, a task skipped or cancelled
    // before it ran) has no log anywhere: no path, rather than one no file will ever have.
    const path =
      chosen === null || chosen > (latest ?? 0)
        ? null
        : chosen === latest
          ? task.log_path
          : // Beside the latest attempt's log: the worker that ran it may log elsewhere than this
            // process (its own SERVICE_LOG_DIR), and an earlier attempt usually ran there too.
            task.log_path
            ? earlierAttemptLogPath(task.log_path, chosen)
            : attemptLogPath(config.logDir, task.job_id, task.id, chosen);
    // The task row names the worker of its current attempt; an attempt retried since is kept in
    // task_attempts with its own worker and log path. It was often retried because its worker
    // stopped or was lost, so the retry ran on another machine: its recorded log is read first,
    // and named when no copy is readable here.
    const current = chosen !== null && chosen === Number(task.attempt) && task.worker_id !== null;
    const earlier = chosen !== null && path !== null && !current ? await findEarlierAttempt(db, task.id, chosen) : undefined;
    const recorded = chosen !== null && chosen < (latest ?? 0) ? (earlier?.log_path ?? null) : null;
    const workerId = current ? task.worker_id : (earlier?.worker_id ?? null);
    // Where the log is, for a reader on another machine: the host of the worker that wrote it.
    const host = workerId === null ? null : ((await findWorkerById(db, workerId))?.hostname ?? null);
    for (const candidate of recorded !== null && recorded !== path ? [recorded, path] : [path]) {
      const tail = candidate ? await readTail(candidate, LOG_TAIL_BYTES) : null;
      if (tail) return { task_id: task.id.toString(), attempt: chosen, path: candidate, host, available: true, ...tail };
    }
    return { task_id: task.id.toString(), attempt: chosen, path: recorded ?? path, host, available: false, size_bytes: null, content: "", truncated: false };
  },
});

/** The last `limit` bytes of a file, or null when it is missing (or on another host). */
async function readTail(path: string, limit: number) {
  try {
    const { size } = await stat(path);
    const start = Math.max(0, size - limit);
    const handle = await open(path, "r");
    try {
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      // The last 1 MiB may begin inside a character: the content starts with the next one.
      return { size_bytes: size, content: buffer.subarray(leadingContinuationBytes(buffer)).toString("utf8"), truncated: start > 0 };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR") return null;
    throw error;
  }
}
