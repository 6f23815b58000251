// cancel_job: a PENDING or RUNNING job and every unfinished task become CANCELLED.

import { z } from "zod";
import { conflict } from "../../core/errors.js";
import { RefId } from "../../models/common.js";
import { JobView } from "../../models/jobs.js";
import { countTasksOfJob } from "../../store/jobs.js";
import { dropFinishedTemps } from "../../engine/cleanup.js";
import { endJobIfDone } from "../../engine/runner.js";
import { cancelJobAndTasks } from "../../store/transitions.js";
import { defineOperation } from "../define.js";
import { requireJob } from "../lookups.js";
import { toJobView } from "../views.js";

/** Above this many cancelled tasks, one resync instead of a change per task. */
const MAX_TASK_CHANGES = 1_000;

export const cancelJob = defineOperation({
  name: "cancel_job",
  summary: "Cancel a job and every task that has not finished",
  description: "Running tasks see their AbortSignal fire. A job that already ended gives 409 job_terminal.",
  mutates: true,
  destructive: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  input: z.object({ ref: RefId }),
  output: JobView,
  http: { method: "POST", path: "/jobs/:ref/cancel" },
  cli: { command: "job cancel <ref>", examples: ["jobhouse job cancel 912370881991716864"], confirm: (job: JobView) => `Cancelled job ${job.id} (${job.name})` },
  async handler({ ref }, ctx) {
    const { db, clock, changes } = ctx;
    const job = await requireJob(db, ref);
    const outcome = await cancelJobAndTasks(db, job.id, clock.now());
    if (!outcome) {
      // Nothing updated: someone finished or cancelled it first, or every task has ended and the
      // job waits to be marked: mark it now, so the answer names how it ended.
      if ((await endJobIfDone(ctx, job.id)) !== null) await dropFinishedTemps(db, ctx.columns, job.id);
      throw conflict(`job ${job.id} is already ${(await requireJob(db, job.id.toString())).status}`, "job_terminal");
    }
    const { job: cancelled, tasks } = outcome;
    // Each task's end, then the job's: a follower of the event stream sees every task end. A cancel
    // of a huge fan-out says "refetch" once instead of flooding every stream.
    if (tasks.length > MAX_TASK_CHANGES) changes.publish({ type: "resync" });
    else for (const task of tasks) changes.publish({ type: "task", id: task.id, jobId: cancelled.id, status: "CANCELLED", attempt: task.attempt });
    changes.publish({ type: "job", id: cancelled.id, name: cancelled.name, status: cancelled.status });
    return toJobView(cancelled, await countTasksOfJob(db, job.id));
  },
});
