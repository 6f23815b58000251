// get_job: one job with its tasks and derived duration.

import { z } from "zod";
import { RefId } from "../../models/common.js";
import { JobDetail } from "../../models/jobs.js";
import { listTasksOfJob } from "../../store/tasks.js";
import { defineOperation } from "../define.js";
import { requireJob } from "../lookups.js";
import { parseJson, toJobView, toTaskView } from "../views.js";

export const getJob = defineOperation({
  name: "get_job",
  summary: "Get a job by id or name (the most recent of that name), with its tasks",
  mutates: false,
  access: "viewer",
  mcp: true,
  input: z.object({ ref: RefId }),
  output: JobDetail,
  http: { method: "GET", path: "/jobs/:ref" },
  cli: { command: "job get <ref>" },
  async handler({ ref }, { db, clock }) {
    const job = await requireJob(db, ref);
    const tasks = await listTasksOfJob(db, job.id);
    const completed = tasks.filter((t) => t.status === "COMPLETED").length;
    const end = job.completed_at === null ? clock.now() : Number(job.completed_at);
    return {
      ...toJobView(job, { total: tasks.length, completed }),
      entrypoint: job.entrypoint,
      kwargs: parseJson(job.kwargs, {}),
      result_ref: parseJson(job.result_ref, null),
      tasks: tasks.map(toTaskView),
      duration_ms: job.started_at === null ? null : Math.max(0, end - Number(job.started_at)),
      code_version: job.code_version ?? null,
    };
  },
});
