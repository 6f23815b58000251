// list_registered_jobs: registered jobs by name, filtered by the enabled flag and a name prefix.

import { RegisteredJobFilter, RegisteredJobPage } from "../../models/jobs.js";
import { listRegisteredJobs as listRows } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import { toRegisteredJobView } from "../views.js";

export const listRegisteredJobs = defineOperation({
  name: "list_registered_jobs",
  summary: "List registered jobs by name, filtered by enabled and a name prefix",
  mutates: false,
  access: "viewer",
  cacheable: true,
  mcp: true,
  input: RegisteredJobFilter,
  output: RegisteredJobPage,
  http: { method: "GET", path: "/registered-jobs" },
  cli: { command: "registered-job list", examples: ["jobhouse registered-job list"], columns: ["name", "entrypoint", "schedule", "timezone", "enabled", "next_run_at"] },
  async handler(filter, { db }) {
    const { rows, total, nextCursor } = await listRows(db, filter);
    return { items: rows.map(toRegisteredJobView), total, next_cursor: nextCursor };
  },
});
