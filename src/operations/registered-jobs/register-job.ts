// register_job: a named entrypoint with an optional cron schedule and default kwargs.

import { conflict, invalid, isServiceError } from "../../core/errors.js";
import { canonicalTimezone, nextFireTime } from "../../engine/schedule.js";
import { RegisterJobRequest, RegisteredJobView } from "../../models/jobs.js";
import { isUniqueViolation } from "../../store/errors.js";
import { type NewRegisteredJob, findRegisteredJob, insertRegisteredJob, upsertRegisteredJob } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import { requireRegisteredJob } from "../lookups.js";
import { toRegisteredJobView } from "../views.js";

const nameTaken = (name: string) => conflict(`a job named "${name}" is already registered (to replace it: replace: true, or --replace on the CLI)`, "name_taken");

export const registerJob = defineOperation({
  name: "register_job",
  summary: "Register a job entrypoint under a name, with an optional cron schedule and default kwargs",
  description:
    "schedule is a 5-field cron expression in UTC unless timezone names an IANA zone; null means manual only. A name already registered is 409 unless replace is true, which replaces that registration.",
  mutates: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  input: RegisterJobRequest,
  output: RegisteredJobView,
  http: { method: "POST", path: "/registered-jobs", status: 201 },
  cli: {
    command: "register-job <entrypoint>",
    examples: [
      "jobhouse register-job examples/sales.ts:salesPipeline --name nightly_sales --schedule \"0 6 * * *\"",
      "jobhouse register-job examples/sales.ts:salesPipeline --name nightly_sales --schedule \"30 5 * * *\" --replace",
    ],
    confirm: (r: RegisteredJobView) => `Registered job ${r.name} (${r.entrypoint})${r.schedule ? `, schedule "${r.schedule}"` : ""}`,
  },
  async handler(request, { db, clock, jobs }) {
    // CONTRACT §4: registering a typo fails now, with the reason, not at the first run; so do
    // defaults the job's kwargs schema rejects (every bad field named). A schedule fires with the
    // defaults alone, so then they must satisfy the whole schema; otherwise each run may add fields.
    // The request's own fields first (a bad schedule was said only once the defaults fitted).
    const timezone = request.timezone ? canonicalTimezone(request.timezone) : null;
    // Accepted, it did nothing: without a limit no run ever waits, so no fire is skipped.
    if (request.overlap === "skip" && request.max_active_runs === null) throw invalid("overlap: skip applies with max_active_runs, which is not set: without a limit no fire is ever skipped");
    const now = clock.now();
    const firstFire = request.schedule ? nextFireTime(request.schedule, timezone, now) : null;
    // "0 0 30 2 *" parses but never comes: refuse it rather than register a job that never runs.
    if (request.schedule && firstFire === null) throw invalid(`schedule "${request.schedule}" never fires`);
    const definition = await jobs.inspect(request.entrypoint, request.defaults, !request.schedule, "defaults").catch((error: unknown) => {
      // Why a scheduled registration's defaults must hold every required argument.
      if (request.schedule && isServiceError(error) && error.kind === "invalid" && error.detail.startsWith("defaults")) {
        throw invalid(`${error.detail} (a scheduled run gets the defaults alone, so they must give every argument the job requires)`);
      }
      throw error;
    });
    const name = request.name ?? definition.name;
    const nextRunAt = request.enabled ? firstFire : null;
    const registration: NewRegisteredJob = {
      name,
      entrypoint: request.entrypoint,
      schedule: request.schedule,
      timezone,
      enabled: request.enabled,
      defaults: request.defaults,
      preservationMode: request.preservation_mode,
      nextRunAtMs: nextRunAt,
      nowMs: now,
      kwargsSchema: definition.kwargsSchema,
      onFailure: request.on_failure,
      maxActiveRuns: request.max_active_runs,
      overlap: request.overlap,
    };
    if (request.replace) {
      await upsertRegisteredJob(db, registration);
      return toRegisteredJobView(await requireRegisteredJob(db, name));
    }
    if (await findRegisteredJob(db, name)) throw nameTaken(name);
    try {
      await insertRegisteredJob(db, registration);
    } catch (error) {
      // Two registrations raced past the check above; the database picked one.
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    return toRegisteredJobView(await requireRegisteredJob(db, name));
  },
});
