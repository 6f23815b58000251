// job_stats: status counts, wall and execution time, per-task queue and execution time.

import { z } from "zod";
import { RefId } from "../../models/common.js";
import { JobStatsView, JobTasksPage } from "../../models/jobs.js";
import { TaskStatus } from "../../models/tasks.js";
import { type TaskSummaryRow, pageTasksOfJob, taskTotalsOfJob } from "../../store/tasks.js";
import { defineOperation } from "../define.js";
import { requireJob } from "../lookups.js";

const ms = (v: bigint | null): number | null => (v === null ? null : Number(v));

/** One task's line: a plain literal, not a spread of its times (slow in V8, see taskViewWith). */
function taskTimings(task: TaskSummaryRow, now: number) {
  const ready = ms(task.ready_at);
  const started = ms(task.started_at);
  const completed = ms(task.completed_at);
  return {
    task_id: task.id.toString(),
    name: task.name,
    status: task.status,
    attempt: Number(task.attempt),
    queue_ms: ready !== null && started !== null ? Math.max(0, started - ready) : null,
    exec_ms: started !== null ? Math.max(0, (completed ?? now) - started) : null,
  };
}

export const jobStats = defineOperation({
  name: "job_stats",
  summary: "Statistics of a job: task counts by status, wall and execution time, per-task timings",
  mutates: false,
  access: "viewer",
  mcp: true,
  input: z.object({ ref: RefId }).extend(JobTasksPage.shape),
  output: JobStatsView,
  http: { method: "GET", path: "/jobs/:ref/stats" },
  cli: { command: "job stats <ref>", examples: ["jobhouse job stats sales"] },
  async handler({ ref, tasks_limit: limit, tasks_cursor: cursor }, { db, clock }) {
    // The job first: its counts, read after it, are never older than its status.
    const job = await requireJob(db, ref);
    const now = clock.now();
    // Counts and execution time over every task, in SQL; per-task timings a page at a time.
    const [{ rows: tasks, nextCursor }, totals] = await Promise.all([pageTasksOfJob(db, job.id, limit, cursor), taskTotalsOfJob(db, job.id, now)]);
    const statusCounts = Object.fromEntries(TaskStatus.options.map((s) => [s, totals.byStatus.get(s) ?? 0])) as Record<string, number>;
    const perTask = tasks.map((task) => taskTimings(task, now));
    const started = ms(job.started_at);
    return {
      job_id: job.id.toString(),
      job_name: job.name,
      status: job.status as JobStatsView["status"],
      status_counts: statusCounts,
      wall_time_ms: started === null ? null : Math.max(0, (ms(job.completed_at) ?? now) - started),
      exec_time_ms: totals.execMs,
      tasks: perTask,
      tasks_next_cursor: nextCursor,
    };
  },
});
