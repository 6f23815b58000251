// list_job_attempts: the attempts of a job's tasks before their latest (failed and retried), for
// the job view's timeline of attempts (CONTRACT §11); a task's latest attempt is the task itself.

import { AttemptPage, JobAttemptsInput } from "../../models/tasks.js";
import { pageAttemptsOfJob } from "../../store/attempts.js";
import { defineOperation } from "../define.js";
import { requireJob } from "../lookups.js";
import { toAttemptView } from "../views.js";

export const listJobAttempts = defineOperation({
  name: "list_job_attempts",
  summary: "List the earlier attempts of a job's tasks (each failed and was retried), by task and attempt",
  description: "A task's latest attempt is the task itself (get_job, get_task); these are the ones before it.",
  mutates: false,
  access: "viewer",
  // SPEC names the MCP tools exactly; this one is REST and CLI only (get_job holds each latest attempt).
  mcp: false,
  input: JobAttemptsInput,
  output: AttemptPage,
  http: { method: "GET", path: "/jobs/:ref/attempts" },
  cli: { command: "job attempts <ref>", examples: ["jobhouse job attempts sales"], columns: ["task_id", "task_name", "attempt", "started_at", "ended_at", "error"] },
  async handler({ ref, limit, cursor }, { db }) {
    const job = await requireJob(db, ref);
    const { rows, total, nextCursor } = await pageAttemptsOfJob(db, job.id, limit, cursor);
    return { items: rows.map(toAttemptView), total, next_cursor: nextCursor };
  },
});
