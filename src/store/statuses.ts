// The state groups every guarded update names (CONTRACT §3), written once.

/** Jobs that may still change: the sources of every job transition. */
export const OPEN_JOB_STATUSES = ["PENDING", "RUNNING"];
/** Jobs that ended: final, and what retention may delete. */
export const TERMINAL_JOB_STATUSES = ["COMPLETED", "FAILED", "CANCELLED"];
/** Tasks not yet ended: what cancel_job cancels and what keeps a job open. */
export const OPEN_TASK_STATUSES = ["PENDING", "CLAIMED", "RUNNING"];
