// get_job: one job with a page of its tasks (and their dependency edges) and derived duration.

import { z } from "zod";
import { RefId } from "../../models/common.js";
import { JobDetail, JobTasksPage } from "../../models/jobs.js";
import { pageTasksOfJobWithDependencies } from "../../store/tasks.js";
import { defineOperation } from "../define.js";
import { requireJobWithCounts } from "../lookups.js";
import { authoredJson, toJobView, toJobTaskView } from "../views.js";

export const getJob = defineOperation({
  name: "get_job",
  summary: "Get a job by id or name (the most recent of that name), with its tasks",
  mutates: false,
  access: "viewer",
  mcp: true,
  input: z.object({ ref: RefId }).extend(JobTasksPage.shape),
  output: JobDetail,
  http: { method: "GET", path: "/jobs/:ref" },
  cli: { command: "job get <ref>", examples: ["jobhouse job get sales", "jobhouse job get 912370881991716864 --wide"], detailColumns: { tasks: ["id", "name", "status", "attempt", "started_at", "completed_at", "error"] } },
  async handler({ ref, tasks_limit: limit, tasks_cursor: cursor }, { db, clock }) {
    // The counts come with the job row (one snapshot); the page after it, so no task in it is
    // older than the job's status (a COMPLETED job never shows a task still RUNNING).
    const job = await requireJobWithCounts(db, ref);
    const { rows: tasks, nextCursor } = await pageTasksOfJobWithDependencies(db, job.id, limit, cursor);
    const { counts } = job;
    const end = job.completed_at === null ? clock.now() : Number(job.completed_at);
    return Object.assign(toJobView(job, counts), {
      entrypoint: job.entrypoint,
      kwargs: authoredJson(job.kwargs, {}),
      result_ref: authoredJson(job.result_ref, null),
      tasks: tasks.map((task) => toJobTaskView(task, task.dependsOn)),
      tasks_next_cursor: nextCursor,
      duration_ms: job.started_at === null ? null : Math.max(0, end - Number(job.started_at)),
      code_version: job.code_version ?? null,
      rerun_of: job.rerun_of === null ? null : job.rerun_of.toString(),
    });
  },
});
