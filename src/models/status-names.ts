// The status names without any schema library, for clients that must stay small (the web app).
export { JOB_STATUSES, OPEN_JOB_STATUSES, OPEN_TASK_STATUSES, TASK_STATUSES, TERMINAL_JOB_STATUSES, TERMINAL_TASK_STATUSES } from "../core/statuses.js";
