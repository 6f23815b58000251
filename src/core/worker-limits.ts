// Bounds of a worker's settings, shared by the configuration, the CLI and the wire models (which the
// web app type-checks too, so this module uses nothing of Node).

/**
 * A worker's slots: each is a task thread (its own V8 heap, SERVICE_TASK_MEMORY_MB at most), all
 * started at once. 100,000 ran the process out of memory instead of refusing.
 */
export const MAX_WORKER_CONCURRENCY = 256;

/** workers.max_tasks is a 32-bit integer column: more was a failed start, then a hung process. */
export const MAX_WORKER_TASKS = 2_147_483_647;

/**
 * The longest task timeout, in seconds: a timer holds at most 2^31 - 1 ms (about 24.8 days), and a
 * longer one fires at once (a task "timed out" after 1 ms).
 */
export const MAX_TASK_TIMEOUT_S = Math.floor((2 ** 31 - 1) / 1000);
