// list_jobs: a filtered page of jobs, newest first.

import { JobListFilter, JobPage } from "../../models/jobs.js";
import { listJobs as listJobRows } from "../../store/jobs.js";
import { defineOperation } from "../define.js";
import { toJobView } from "../views.js";

export const listJobs = defineOperation({
  name: "list_jobs",
  summary: "List jobs, newest first, filtered by status, name and creation time",
  mutates: false,
  access: "viewer",
  cacheable: true,
  mcp: true,
  input: JobListFilter,
  output: JobPage,
  http: { method: "GET", path: "/jobs" },
  cli: { command: "job list", examples: ["jobhouse job list --status FAILED --since 2026-11-01T00:00:00Z", "jobhouse job list --name sales --limit 5 --output wide"], columns: ["id", "name", "status", "completed_tasks", "total_tasks", "created_at", "error"] },
  async handler(filter, { db }) {
    const { rows, total, nextCursor } = await listJobRows(db, {
      status: filter.status,
      name: filter.name,
      sinceMs: filter.since,
      limit: filter.limit,
      cursor: filter.cursor,
    });
    return {
      items: rows.map(({ job, counts }) => toJobView(job, counts)),
      total,
      next_cursor: nextCursor,
    };
  },
});
