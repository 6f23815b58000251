// run_job: a PENDING job and its entry task, from a registered job's name or an entrypoint.

import { createHash } from "node:crypto";
import { JobView, RunJobRequest } from "../../models/jobs.js";
import { canonical } from "../../core/canonical.js";
import { conflict, invalid, notFound } from "../../core/errors.js";
import type { PreservationModeName } from "../../core/config.js";
import { isEntrypoint } from "../../engine/entrypoints.js";
import { collectObjectNames, fromStoredJson } from "../../engine/references.js";
import { findObjectForJob } from "../../store/data-objects.js";
import { type RunRequest, planRun, runsGateOf, startRun, startRunIf } from "../../engine/start-run.js";
import { claimIdempotencyKey, findIdempotencyKey } from "../../store/idempotency-keys.js";
import { countTasksOfJob, findJobById } from "../../store/jobs.js";
import { findRegisteredJob } from "../../store/registered-jobs.js";
import type { Store } from "../../store/db.js";
import type { OperationContext } from "../context.js";
import { defineOperation } from "../define.js";
import { API_PREFIX } from "../paths.js";
import { toJobView } from "../views.js";

export const runJob = defineOperation({
  name: "run_job",
  summary: "Run a registered job by name, or an entrypoint module:export unregistered",
  description:
    "Registered defaults merge under kwargs (shallow; the request wins). Returns the new PENDING job; with an idempotency_key used within its window for the same request, the job that use started (409 idempotency_key_reused for another request).",
  mutates: true,
  access: "admin",
  mcp: true,
  input: RunJobRequest,
  output: JobView,
  http: { method: "POST", path: "/jobs:run", status: 201, errors: [404], location: (job: JobView) => `${API_PREFIX}/jobs/${job.id}` },
  cli: {
    command: "run-job [name]",
    examples: [
      "jobhouse run-job sales --wait",
      "jobhouse run-job examples/primes.ts:countPrimes --kwargs '{\"limit\": 2000000}' --wait",
      "jobhouse run-job --rerun-of 912370881995911168 --wait",
    ],
    flags: { all: { field: "from", value: "all", description: "with --rerun-of: run every task again (the same as --from all)" } },
    follow: true,
    confirm: (job: JobView) => `Started job ${job.id} (${job.name}): ${job.status}`,
  },
  async handler(request, { db, ids, clock, config, changes, jobs }) {
    refuseIgnoredFields(request);
    const key = request.idempotency_key;
    const fingerprint = key === undefined ? "" : requestFingerprint(request);
    // A retried request returns its job without loading anything (the module may have changed since).
    // Uses of a key older than this have expired.
    const cutoffMs = clock.now() - config.idempotencyWindowS * 1000;
    const replayed = key === undefined ? undefined : await replay(db, key, fingerprint, cutoffMs);
    if (replayed) return replayed;
    let plan = request.rerun_of === undefined ? await planNewRun(request, { db, config, jobs }) : await planRerun(request.rerun_of, request.from ?? "failed", { db, config, jobs });
    // A re-run keeps its run's priority unless the request names another.
    if (request.rerun_of !== undefined && request.priority !== 0) plan = { ...plan, priority: request.priority };
    let job;
    if (key === undefined) job = await startRun(db, ids, clock, config, plan);
    else {
      job = await startRunIf(db, ids, clock, config, plan, (tx, jobId) => claimIdempotencyKey(tx, { key, jobId, fingerprint, nowMs: clock.now(), cutoffMs }));
      // Another request with this key committed its job between our look and our claim.
      if (!job) return (await replay(db, key, fingerprint, cutoffMs)) ?? raced(key);
    }
    changes.publish({ type: "job", id: job.id, name: job.name, status: job.status }, true);
    return toJobView(job, { total: 1, completed: 0 });
  },
});

type Planning = Pick<OperationContext, "db" | "config" | "jobs">;

/**
 * Fields a request gives that it would not use are refused, as unknown ones are: a re-run takes its
 * job's entrypoint, kwargs and mode (name, kwargs and preservation_mode were dropped in silence), and
 * `from` means something only with rerun_of.
 */
function refuseIgnoredFields(request: { name?: string; rerun_of?: bigint; from?: string; kwargs: Record<string, unknown>; preservation_mode?: string }): void {
  if (request.rerun_of === undefined) {
    // "failed" too: it was accepted and ignored while "all" was refused.
    if (request.from !== undefined) throw invalid(`from: only with rerun_of (it says which tasks of the re-run job run again)`);
    return;
  }
  const given = [request.name !== undefined && "name", Object.keys(request.kwargs).length > 0 && "kwargs", request.preservation_mode !== undefined && "preservation_mode"].filter((field): field is string => field !== false);
  if (given.length > 0) throw invalid(`${given.join(", ")}: a re-run (rerun_of) runs its job's entrypoint with its kwargs and preservation mode; leave ${given.length > 1 ? "them" : "it"} out`);
}

async function planNewRun(request: { name?: string; kwargs: Record<string, unknown>; preservation_mode?: PreservationModeName; priority: number }, { db, config, jobs }: Planning): Promise<RunRequest> {
  const name = request.name;
  if (name === undefined) throw invalid("name: required (a registered job's name or an entrypoint module:export), unless rerun_of is given");
  const registered = isEntrypoint(name) ? undefined : await findRegisteredJob(db, name);
  if (!registered && !isEntrypoint(name)) {
    throw notFound(`no registered job is named "${name}"; give a registered name or an entrypoint module:export`);
  }
  const plan = await planRun(jobs, config, { entrypoint: name, registered, kwargs: request.kwargs, runType: "MANUAL", preservationMode: request.preservation_mode });
  await refuseUnknownObjects(db, plan.kwargs);
  return { ...plan, priority: request.priority };
}

/** A job id no job has: a new run owns no data object yet, so its names mean global objects (or tables). */
const NEW_RUN = 0n;

/**
 * {"object": name} in a run's kwargs must name a data object: a typo was accepted (201), then failed
 * the run's entry task. Looked up as the run's tasks will look it up.
 */
async function refuseUnknownObjects(db: Store, kwargs: Record<string, unknown>): Promise<void> {
  for (const name of collectObjectNames(kwargs)) {
    if (!(await findObjectForJob(db, name, NEW_RUN))) throw invalid(`kwargs: {"object": ${JSON.stringify(name)}} names no data object: give a global object's name or an object's table name`);
  }
}

/**
 * A re-run: the finished job's entrypoint, kwargs (as that run received them, registered defaults
 * already merged), preservation mode, name and registration. What it reuses is decided as its tasks
 * are scheduled (engine/task-identity.ts).
 */
async function planRerun(of: bigint, from: "failed" | "all", { db, config, jobs }: Planning): Promise<RunRequest> {
  const old = await findJobById(db, of);
  if (!old) throw notFound(`no job ${of} to re-run`);
  if (old.status === "PENDING" || old.status === "RUNNING") throw conflict(`job ${of} is still ${old.status}: re-run it once it has ended`, "job_not_finished");
  const plan = await planRun(jobs, config, {
    entrypoint: old.entrypoint,
    // As that run received them (docs/RUNS.md): its schema's transforms applied once already.
    kwargs: fromStoredJson(old.kwargs) as Record<string, unknown>,
    parsedKwargs: true,
    runType: "MANUAL",
    preservationMode: old.preservation_mode as PreservationModeName,
  });
  // The registration's run limit holds for its re-runs too.
  const registered = old.registered_name === null ? undefined : await findRegisteredJob(db, old.registered_name);
  return { ...plan, name: old.name, registeredName: old.registered_name, priority: Number(old.priority), runsGate: runsGateOf(registered), rerun: { of, from } };
}

/**
 * The request an idempotency key stands for: name, kwargs (keys in any order), mode and priority
 * (the same key with another priority returned the first job instead of 409). The priority is
 * left out at its default, so keys used before it counted still match their retries.
 */
function requestFingerprint(request: { name?: string; rerun_of?: bigint; from?: string; kwargs: Record<string, unknown>; preservation_mode?: string; priority?: number }): string {
  const text = JSON.stringify(
    canonical({
      name: request.name ?? null,
      rerun_of: request.rerun_of?.toString() ?? null,
      from: request.rerun_of === undefined ? null : (request.from ?? "failed"),
      kwargs: request.kwargs,
      preservation_mode: request.preservation_mode ?? null,
      ...(request.priority ? { priority: request.priority } : {}),
    }),
  );
  return createHash("sha256").update(text).digest("hex");
}

/** The job a live key started, as it is now; undefined when the key is free, expired or its job gone. */
async function replay(db: Store, key: string, fingerprint: string, cutoffMs: number): Promise<JobView | undefined> {
  const used = await findIdempotencyKey(db, key);
  if (!used || Number(used.created_at) < cutoffMs) return undefined;
  const job = await findJobById(db, used.job_id);
  if (!job) return undefined;
  if (used.fingerprint !== fingerprint) throw conflict(`idempotency key "${key}" was used for a different request (job ${job.id})`, "idempotency_key_reused");
  return toJobView(job, await countTasksOfJob(db, job.id));
}

function raced(key: string): never {
  throw conflict(`idempotency key "${key}" is being used by a request that has not finished; try again`, "idempotency_key_busy");
}
