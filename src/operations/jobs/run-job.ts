// run_job: a PENDING job and its entry task, from a registered job's name or an entrypoint.

import { JobView, RunJobRequest } from "../../models/jobs.js";
import { notFound } from "../../core/errors.js";
import { isEntrypoint } from "../../engine/entrypoints.js";
import { startRun } from "../../engine/start-run.js";
import { findRegisteredJob } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import { parseJson, toJobView } from "../views.js";

export const runJob = defineOperation({
  name: "run_job",
  summary: "Run a registered job by name, or an entrypoint module:export unregistered",
  description: "Registered defaults merge under kwargs (shallow; the request wins). Returns the new PENDING job.",
  mutates: true,
  access: "admin",
  mcp: true,
  input: RunJobRequest,
  output: JobView,
  http: { method: "POST", path: "/jobs:run", status: 201, errors: [404], location: (job: JobView) => `/api/v0/jobs/${job.id}` },
  cli: { command: "run-job <name>", follow: true, confirm: (job: JobView) => `Started job ${job.id} (${job.name}): ${job.status}` },
  async handler(request, { db, ids, clock, config, wake, jobs }) {
    const registered = isEntrypoint(request.name) ? undefined : await findRegisteredJob(db, request.name);
    if (!registered && !isEntrypoint(request.name)) {
      throw notFound(`no registered job is named "${request.name}"; give a registered name or an entrypoint module:export`);
    }
    const entrypoint = registered?.entrypoint ?? request.name;
    // CONTRACT §4: the module loads and the export is a job, or 422 now rather than a failed run later.
    const merged = { ...parseJson<Record<string, unknown>>(registered?.defaults ?? null, {}), ...request.kwargs };
    const definition = await jobs.inspect(entrypoint, merged);
    const kwargs = definition.kwargs ?? merged;
    // CONTRACT §4 precedence: the request, the registration, the service default.
    const preservationMode =
      request.preservation_mode ?? (registered?.preservation_mode as "NONE" | "FULL" | null) ?? config.defaultPreservationMode;
    const { retries, timeout_s } = definition.options;
    const job = await startRun(db, ids, clock, {
      name: registered?.name ?? definition.name,
      entrypoint,
      kwargs,
      runType: "MANUAL",
      preservationMode,
      registeredName: registered?.name ?? null,
      maxAttempts: 1 + (retries ?? 0),
      timeoutMs: timeout_s !== undefined ? Math.round(timeout_s * 1000) : config.taskTimeoutS === null ? null : config.taskTimeoutS * 1000,
    });
    wake();
    return toJobView(job, { total: 1, completed: 0 });
  },
});
