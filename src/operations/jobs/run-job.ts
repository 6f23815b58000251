// run_job: a PENDING job and its entry task, from a registered job's name or an entrypoint.

import { JobView, RunJobRequest } from "../../models/jobs.js";
import { notFound } from "../../core/errors.js";
import { isEntrypoint, parseEntrypoint } from "../../engine/entrypoints.js";
import { startRun } from "../../engine/start-run.js";
import { findRegisteredJob } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import { parseJson, toJobView } from "../views.js";

export const runJob = defineOperation({
  name: "run_job",
  summary: "Run a registered job by name, or an entrypoint module:export unregistered",
  description: "Registered defaults merge under kwargs (shallow; the request wins). Returns the new PENDING job.",
  mutates: true,
  mcp: true,
  input: RunJobRequest,
  output: JobView,
  http: { method: "POST", path: "/jobs:run", status: 201, location: (job: JobView) => `/api/v0/jobs/${job.id}` },
  cli: { command: "run-job <name>", confirm: (job: JobView) => `Started job ${job.id} (${job.name}): ${job.status}` },
  async handler(request, { db, ids, clock, config }) {
    const registered = isEntrypoint(request.name) ? undefined : await findRegisteredJob(db, request.name);
    if (!registered && !isEntrypoint(request.name)) {
      throw notFound(`no registered job is named "${request.name}"; give a registered name or an entrypoint module:export`);
    }
    const entrypoint = registered?.entrypoint ?? request.name;
    const parsed = parseEntrypoint(entrypoint);
    // CONTRACT §4 precedence: the request, the registration, the service default.
    const preservationMode =
      request.preservation_mode ?? (registered?.preservation_mode as "NONE" | "FULL" | null) ?? config.defaultPreservationMode;
    const job = await startRun(db, ids, clock, {
      name: registered?.name ?? parsed.exportName,
      entrypoint,
      kwargs: { ...parseJson<Record<string, unknown>>(registered?.defaults ?? null, {}), ...request.kwargs },
      runType: "MANUAL",
      preservationMode,
      registeredName: registered?.name ?? null,
      timeoutMs: config.taskTimeoutS === null ? null : config.taskTimeoutS * 1000,
    });
    return toJobView(job, { total: 1, completed: 0 });
  },
});
