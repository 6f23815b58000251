// The states of jobs and tasks and the groups every guarded update names (CONTRACT §3), written
// once: the wire models (models/) and the store's guards (store/) both read them from here.

export const JOB_STATUSES = ["PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"] as const;
export const TASK_STATUSES = ["PENDING", "CLAIMED", "RUNNING", "COMPLETED", "FAILED", "SKIPPED", "CANCELLED"] as const;
export type JobStatusName = (typeof JOB_STATUSES)[number];
export type TaskStatusName = (typeof TASK_STATUSES)[number];

/** Jobs that may still change: the sources of every job transition. */
export const OPEN_JOB_STATUSES: readonly JobStatusName[] = ["PENDING", "RUNNING"];
/** Jobs that ended: final, and what retention may delete. */
export const TERMINAL_JOB_STATUSES: readonly JobStatusName[] = ["COMPLETED", "FAILED", "CANCELLED"];
/** Tasks not yet ended: what cancel_job cancels and what keeps a job open. */
export const OPEN_TASK_STATUSES: readonly TaskStatusName[] = ["PENDING", "CLAIMED", "RUNNING"];
/** Tasks that ended: final. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatusName[] = ["COMPLETED", "FAILED", "SKIPPED", "CANCELLED"];
