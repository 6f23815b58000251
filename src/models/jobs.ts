// Job and registered-job wire models (SPEC "Orchestration models", CONTRACT §2-§4).

import { z } from "zod";
import { JOB_STATUSES } from "../core/statuses.js";
import { Cursor, DateTimeInput, IdInput, IdString, JsonObject, Limit, NullableTimestamp, Page, Timestamp } from "./common.js";
import { JobTaskView } from "./tasks.js";

export const JobStatus = z.enum(JOB_STATUSES);
export const RunType = z.enum(["MANUAL", "SCHEDULED"]);
export const PreservationMode = z.enum(["NONE", "FULL"]);
export type JobStatus = z.infer<typeof JobStatus>;

export { TERMINAL_JOB_STATUSES } from "../core/statuses.js";

export const JobView = z.object({
  id: IdString,
  name: z.string(),
  status: JobStatus,
  run_type: RunType,
  preservation_mode: PreservationMode,
  created_at: Timestamp,
  started_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  error: z.string().nullable(),
  total_tasks: z.number().int().nonnegative(),
  completed_tasks: z.number().int().nonnegative(),
});
export type JobView = z.infer<typeof JobView>;

export const JobDetail = JobView.extend({
  entrypoint: z.string(),
  kwargs: JsonObject,
  result_ref: z.unknown().describe("The entry task's result_ref once the job completed, else null"),
  tasks: z.array(JobTaskView).describe("A page of the job's tasks in creation order (tasks_limit, default 1,000); total_tasks counts them all"),
  tasks_next_cursor: z.string().nullable().describe("Pass as tasks_cursor for the next page of tasks; null on the last"),
  duration_ms: z.number().int().nullable().describe("completed_at (or now) minus started_at; null before start"),
  code_version: z.string().nullable().describe("Hash of the job's module and the local files it imports when the run started; null for a package"),
  rerun_of: IdString.nullable().describe("The job this run re-runs (run_job rerun_of); null for a first run"),
});
export type JobDetail = z.infer<typeof JobDetail>;

export const TaskStats = z.object({
  task_id: IdString,
  name: z.string(),
  status: z.string(),
  attempt: z.number().int(),
  queue_ms: z.number().int().nullable().describe("From ready to started"),
  exec_ms: z.number().int().nullable().describe("From started to completed (or now)"),
});

export const JobStatsView = z.object({
  job_id: IdString,
  job_name: z.string(),
  status: JobStatus,
  status_counts: z.record(z.string(), z.number().int()),
  wall_time_ms: z.number().int().nullable(),
  exec_time_ms: z.number().int().describe("Summed over every task of the job, not only this page"),
  tasks: z.array(TaskStats).describe("A page of per-task timings in creation order (tasks_limit, default 1,000)"),
  tasks_next_cursor: z.string().nullable().describe("Pass as tasks_cursor for the next page of tasks; null on the last"),
});

/** get_job and job_stats: a job by ref, and which page of its tasks. */
export const JobTasksPage = z.object({
  tasks_limit: z.number().int().min(1).max(10_000).default(1_000).meta({ description: "Tasks per page (1 to 10,000)", examples: [1000] }),
  tasks_cursor: Cursor.optional().meta({ description: "The tasks_next_cursor of the previous page", examples: ["OTEyMzcwODgxOTk1OTExMTY4"] }),
});
export type JobStatsView = z.infer<typeof JobStatsView>;

export const JobListFilter = z.object({
  status: JobStatus.optional().meta({ description: "Only jobs in this status", examples: ["FAILED"] }),
  name: z.string().min(1).max(200).optional().meta({ description: "Only jobs of this name", examples: ["sales_pipeline"] }),
  since: DateTimeInput.optional().describe("Only jobs created at or after this time"),
  limit: Limit,
  cursor: Cursor.optional(),
});

export const RunJobRequest = z.object({
  name: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .meta({ description: "A registered job's name, or an entrypoint module:export; required unless rerun_of is given", examples: ["nightly_sales", "examples/sales.ts:salesPipeline"] }),
  rerun_of: IdInput.optional().meta({
    description:
      "Re-run this finished job: same entrypoint, kwargs and preservation mode; with from \"failed\" the tasks that completed in it are reused (their results, not run again) and only the rest runs",
    examples: ["912370881995911168"],
  }),
  // No default in the schema: a `from` given without rerun_of is refused, whichever value it has.
  from: z
    .enum(["failed", "all"])
    .optional()
    .meta({ description: "Only with rerun_of: \"failed\" (the default) reuses the completed tasks, \"all\" runs everything again", examples: ["failed"] }),
  kwargs: JsonObject.default({}).meta({ description: "Arguments of the job function; registered defaults merge under them", examples: [{ min_amount: 300 }] }),
  priority: z
    .number()
    .int()
    .min(-1000)
    .max(1000)
    .default(0)
    .meta({ description: "Higher runs first: its tasks are claimed before those of lower runs that are ready too (-1000 to 1000)", examples: [10] }),
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({
      description:
        "A key of your choosing for this request: sent again within the window (24 h by default), it returns the job its first use started instead of starting another; reused for a different request, 409",
      examples: ["nightly-2026-11-23"],
    }),
  preservation_mode: PreservationMode.optional().meta({ description: "NONE drops the run's temporary objects once nothing reads them; FULL keeps them for debugging and lineage", examples: ["FULL"] }),
}).meta({ examples: [{ name: "examples/sales.ts:salesPipeline", kwargs: { min_amount: 300 } }, { name: "nightly_sales" }] });

/** A 5-field cron expression, or null for manual-only. */
const Schedule = z.string().min(1).max(200).nullable().describe("A 5-field cron expression (minute hour day month weekday), or null to run only on demand");

export const RegisterJobRequest = z.object({
  entrypoint: z.string().min(3).max(500).meta({ description: "<module>:<export>, e.g. examples/sales.ts:salesPipeline", examples: ["examples/sales.ts:salesPipeline"] }),
  name: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/)
    // CONTRACT §4: an all-digit ref means an id, so such a name could never be looked up. Also a
    // pattern, so the published schema (OpenAPI, MCP's inputSchema) refuses what the server refuses.
    .regex(/^(?!\d+$)/, "a name may not be all digits (those refer to ids)")
    .optional()
    .meta({ description: "Defaults to the job's own name", examples: ["nightly_sales"] }),
  schedule: Schedule.default(null).meta({ description: "A 5-field cron expression (minute hour day month weekday), or null to run only on demand", examples: ["0 2 * * *", null] }),
  timezone: z.string().min(1).max(64).nullable().default(null).meta({ description: "IANA zone for the schedule; UTC when null", examples: ["Europe/Paris"] }),
  defaults: JsonObject.default({}).meta({ description: "Arguments every run starts from; run_job's kwargs override them", examples: [{ min_amount: 300 }] }),
  preservation_mode: PreservationMode.nullable().default(null).meta({ description: "The runs' preservation mode (NONE or FULL); null for the default, NONE", examples: ["NONE"] }),
  enabled: z.boolean().default(true).meta({ description: "Whether its schedule fires; a disabled job still runs on demand", examples: [true] }),
  max_active_runs: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .nullable()
    .default(null)
    .meta({ description: "At most this many of its runs RUNNING at once, across every worker; a run beyond it waits PENDING. null: no limit", examples: [1] }),
  overlap: z
    .enum(["queue", "skip"])
    .default("queue")
    .meta({ description: "With max_active_runs, what a scheduled fire does while that many runs are under way: queue (wait PENDING) or skip (not run)", examples: ["skip"] }),
  on_failure: z
    .url({ protocol: /^https?$/, normalize: true, error: "must be an http or https URL" })
    .max(2000)
    .nullable()
    .default(null)
    .meta({
      description: "A webhook (an http or https URL) told when a run of this job fails: a POST of the run's JobView plus a one-line `text` (Slack-style receivers show it), retried with backoff",
      examples: ["https://hooks.slack.com/services/T000/B000/XXXX"],
    }),
  replace: z
    .boolean()
    .default(false)
    .meta({
      description: "Replace the registration of this name if there is one (every field takes the request's value or its default; the next fire is recomputed; past runs stay) instead of failing with 409",
      examples: [true],
    }),
}).meta({ examples: [{ entrypoint: "examples/sales.ts:salesPipeline", name: "nightly_sales", schedule: "0 2 * * *", timezone: "Europe/Paris", defaults: { min_amount: 300 } }] });

export const RegisteredJobView = z.object({
  name: z.string(),
  entrypoint: z.string(),
  schedule: z.string().nullable(),
  timezone: z.string().nullable(),
  enabled: z.boolean(),
  defaults: JsonObject,
  preservation_mode: PreservationMode.nullable(),
  next_run_at: NullableTimestamp,
  created_at: Timestamp,
  on_failure: z.string().nullable().describe("The webhook told of failed runs; null for none"),
  max_active_runs: z.number().int().nullable().describe("At most this many runs RUNNING at once; null: no limit"),
  overlap: z.enum(["queue", "skip"]).describe("What a scheduled fire does at max_active_runs: queue or skip"),
  kwargs_schema: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("JSON Schema of the job's kwargs, from the job's own schema when it was registered; null when it declares none"),
});
export type RegisteredJobView = z.infer<typeof RegisteredJobView>;

export const RegisteredJobFilter = z.object({
  enabled: z.boolean().optional().meta({ description: "Only enabled (true) or disabled (false) registrations", examples: [true] }),
  name: z.string().min(1).max(200).optional().meta({ description: "Names starting with this text", examples: ["nightly"] }),
  limit: Limit,
  cursor: Cursor.optional(),
});

export const RegisteredJobName = z.object({ name: z.string().min(1).max(200).meta({ description: "The registration's name", examples: ["nightly_sales"] }) });

/** A page of JobView (list responses are named for generated clients). */
export const JobPage = Page(JobView);

/** A page of RegisteredJobView (list responses are named for generated clients). */
export const RegisteredJobPage = Page(RegisteredJobView);
