// run_job: a PENDING job and its entry task, from a registered job's name or an entrypoint.

import { JobView, RunJobRequest } from "../../models/jobs.js";
import { notFound } from "../../core/errors.js";
import { isEntrypoint } from "../../engine/entrypoints.js";
import { planRun, startRun } from "../../engine/start-run.js";
import { findRegisteredJob } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import { API_PREFIX } from "../paths.js";
import { toJobView } from "../views.js";

export const runJob = defineOperation({
  name: "run_job",
  summary: "Run a registered job by name, or an entrypoint module:export unregistered",
  description: "Registered defaults merge under kwargs (shallow; the request wins). Returns the new PENDING job.",
  mutates: true,
  access: "admin",
  mcp: true,
  input: RunJobRequest,
  output: JobView,
  http: { method: "POST", path: "/jobs:run", status: 201, errors: [404], location: (job: JobView) => `${API_PREFIX}/jobs/${job.id}` },
  cli: { command: "run-job <name>", examples: ["jobhouse run-job sales --wait", "jobhouse run-job examples/primes.ts:countPrimes --kwargs '{\"limit\": 2000000}' --wait"], follow: true, confirm: (job: JobView) => `Started job ${job.id} (${job.name}): ${job.status}` },
  async handler(request, { db, ids, clock, config, changes, jobs }) {
    const registered = isEntrypoint(request.name) ? undefined : await findRegisteredJob(db, request.name);
    if (!registered && !isEntrypoint(request.name)) {
      throw notFound(`no registered job is named "${request.name}"; give a registered name or an entrypoint module:export`);
    }
    const plan = await planRun(jobs, config, {
      entrypoint: request.name,
      registered,
      kwargs: request.kwargs,
      runType: "MANUAL",
      preservationMode: request.preservation_mode,
    });
    const job = await startRun(db, ids, clock, config, plan);
    changes.publish({ type: "job", id: job.id, name: job.name, status: job.status }, true);
    return toJobView(job, { total: 1, completed: 0 });
  },
});
