// Worker wire models (SPEC "Orchestration models", CONTRACT §3).

import { z } from "zod";
import { MAX_WORKER_TASKS } from "../core/worker-limits.js";
import { Cursor, IdInput, IdString, Limit, NullableTimestamp, Page, Timestamp } from "./common.js";

export const WorkerStatus = z.enum(["ACTIVE", "STOPPING", "STOPPED", "LOST"]);
export type WorkerStatus = z.infer<typeof WorkerStatus>;

export const WorkerView = z.object({
  id: IdString,
  status: WorkerStatus,
  hostname: z.string(),
  pid: z.number().int(),
  concurrency: z.number().int().positive(),
  started_at: Timestamp,
  last_heartbeat: NullableTimestamp,
  tasks_completed: z.number().int().nonnegative(),
  tasks_failed: z.number().int().nonnegative(),
});
export type WorkerView = z.infer<typeof WorkerView>;

export const WorkerFilter = z.object({
  status: WorkerStatus.optional().meta({ description: "Only workers in this status", examples: ["ACTIVE"] }),
  limit: Limit,
  cursor: Cursor.optional(),
});

export const StartWorkerRequest = z.object({
  max_tasks: z.number().int().positive().max(MAX_WORKER_TASKS).nullable().optional().meta({ description: "Stop after this many tasks; unlimited when omitted", examples: [1000] }),
});

export const WorkerIdInput = z.object({ id: IdInput });

/** A page of WorkerView (list responses are named for generated clients). */
export const WorkerPage = Page(WorkerView);
