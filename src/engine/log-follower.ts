// Follows one task's log for the event stream (`task.log`): the attempt's file is the log's one
// source of truth (CONTRACT §4), so the follower reads what was appended to it, the way `tail -f`
// does, and moves to the next attempt's file when the task starts again.

import { open, stat } from "node:fs/promises";
import type { Store } from "../store/db.js";
import { leadingContinuationBytes, wholeCharactersEnd } from "../core/utf8.js";
import { findTaskById } from "../store/tasks.js";
import { attemptLogPath } from "./task-log.js";

/** Log text read from one attempt's file, starting `offset` bytes into it. */
export interface LogChunk {
  attempt: number;
  offset: number;
  text: string;
}

export interface LogFollower {
  readonly jobId: bigint;
  /**
   * The next piece of what was appended since the last read (whole lines only, unless `all`), or
   * undefined when there is nothing new; call again until undefined to read everything.
   */
  read(all?: boolean): Promise<LogChunk | undefined>;
  /** The task started attempt `attempt`: later reads come from its file, from its start. */
  switchTo(attempt: number): Promise<void>;
}

/** A new follower starts this far before the end of the current file, as get_task_logs reads it. */
const START_BYTES = 1024 * 1024;
/** At most this much per read: a huge log reaches a client in pieces, never as one buffer. */
const READ_BYTES = 256 * 1024;

/** Undefined when the task does not exist. */
export async function followTaskLog(db: Store, logDir: string, taskId: bigint): Promise<LogFollower | undefined> {
  const task = await findTaskById(db, taskId);
  if (!task) return undefined;
  const jobId = task.job_id;
  // log_path names the latest attempt that started; a task not yet started has none.
  let attempt = task.log_path ? Number(/(\d+)\.log$/.exec(task.log_path)?.[1] ?? task.attempt) : Number(task.attempt);
  let path = task.log_path ?? attemptLogPath(logDir, jobId, taskId, attempt);
  let offset = Math.max(0, (await sizeOf(path)) - START_BYTES);

  return {
    jobId,
    async read(all = false) {
      const size = await sizeOf(path);
      if (size <= offset) return undefined;
      const length = Math.min(size - offset, READ_BYTES);
      let bytes = await readRange(path, offset, length);
      // The first read starts 1 MiB before the end, maybe inside a character: from the next one.
      const skip = leadingContinuationBytes(bytes);
      offset += skip;
      bytes = bytes.subarray(skip);
      // A line is sent whole: cut after the last newline (unless told to take everything, or one
      // line is longer than a whole read), and never inside a character.
      let cut = all ? bytes.length : bytes.lastIndexOf(0x0a) + 1;
      if (cut === 0 && skip + bytes.length === READ_BYTES) cut = bytes.length;
      if (cut > 0 && bytes[cut - 1] !== 0x0a) cut = wholeCharactersEnd(bytes, cut) || cut;
      if (cut === 0) return undefined;
      const chunk = { attempt, offset, text: bytes.subarray(0, cut).toString("utf8") };
      offset += cut;
      return chunk;
    },
    async switchTo(next) {
      if (next <= attempt) return;
      const row = await findTaskById(db, taskId);
      attempt = next;
      path = row?.log_path && row.log_path.endsWith(`${next}.log`) ? row.log_path : attemptLogPath(logDir, jobId, taskId, next);
      offset = 0;
    },
  };
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    // Not written yet (or on another host): nothing to read.
    return 0;
  }
}

async function readRange(path: string, offset: number, length: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
