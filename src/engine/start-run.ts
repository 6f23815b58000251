// Starting a run of a job, the one way: the planner turns a job (inspected in a task thread: its
// name, options and kwargs schema), a registration and the request into the run's settings, and
// startRun writes the job row and its entry task in one transaction. Used by run_job and the
// scheduler alike, and by anything later that starts runs.

import { ENTRY_IDENTITY } from "./task-identity.js";
import { toStoredJson } from "./references.js";
import { MAX_PENDING_NOTICES, enqueueFailureNotification } from "../store/failure-notifications.js";
import type { Clock } from "../core/clock.js";
import type { Config, PreservationModeName } from "../core/config.js";
import type { IdGenerator } from "../core/ids.js";
import type { Store } from "../store/db.js";
import { insertJob } from "../store/jobs.js";
import { updateKwargsSchema } from "../store/registered-jobs.js";
import type { JobRow, RegisteredJobRow } from "../store/schema.js";
import { insertTask } from "../store/tasks.js";
import type { TaskOptions } from "./definitions.js";
import type { JobInspector } from "./job-inspector.js";
import { defaultTimeoutMsOf, newTaskRow } from "./task-rows.js";

export interface RunRequest {
  /** The job's display name. */
  name: string;
  entrypoint: string;
  kwargs: Record<string, unknown>;
  runType: "MANUAL" | "SCHEDULED";
  preservationMode: PreservationModeName;
  registeredName: string | null;
  /** The job's own options (retries, backoff_s, timeout_s): they govern its entry task. */
  options?: TaskOptions;
  /** The hash of the job's module and its local imports as loaded to plan the run. */
  codeVersion?: string | null;
  /**
   * Why the run cannot start (a scheduled run whose module no longer loads or whose kwargs its
   * schema rejects): it is recorded FAILED at once, its entry task carrying the reason, rather
   * than skipped silently or run with arguments its schema refuses.
   */
  refusal?: string;
  /** Higher runs first; its tasks inherit it (default 0). */
  priority?: number;
  /** A registration's max_active_runs: its entry task waits behind this gate. */
  runsGate?: { gate: string; limit: number };
  /** A re-run: the run it re-runs, and whether it reuses that run's completed tasks ("failed"). */
  rerun?: { of: bigint; from: "failed" | "all" };
  /**
   * The kwargs JSON Schema of the job as loaded to plan this run, when it differs from the one its
   * registration shows: recorded with the run, so the registration describes the code that runs
   * (the web app's editor checks arguments against it, and refused a field the job had gained).
   */
  refreshedSchema?: { from: string | null; to: string | null };
}

export interface PlanSource {
  /** An entrypoint to run unregistered, when there is no registration. */
  entrypoint?: string;
  registered?: RegisteredJobRow | null;
  /** The request's kwargs; a registration's defaults merge under them (shallow). */
  kwargs?: Record<string, unknown>;
  /**
   * The kwargs are a run's own, already through the job's schema (a re-run): they are used as
   * they are, since a schema's transforms must not apply twice.
   */
  parsedKwargs?: boolean;
  runType: "MANUAL" | "SCHEDULED";
  /** The request's preservation mode, if it named one. */
  preservationMode?: PreservationModeName;
}

/**
 * The settings of a run. The module loads and the export is a job, and the kwargs fit its schema,
 * or 422 now rather than a failed run later (CONTRACT §4).
 */
export async function planRun(jobs: JobInspector, config: Pick<Config, "defaultPreservationMode">, source: PlanSource): Promise<RunRequest> {
  const registered = source.registered ?? null;
  const entrypoint = registered?.entrypoint ?? source.entrypoint!;
  const defaults = registered ? (JSON.parse(registered.defaults) as Record<string, unknown>) : {};
  const merged = { ...defaults, ...(source.kwargs ?? {}) };
  const job = await jobs.inspect(entrypoint, source.parsedKwargs ? undefined : merged);
  const schemaText = job.kwargsSchema === null ? null : JSON.stringify(job.kwargsSchema);
  return {
    refreshedSchema: registered && registered.kwargs_schema !== schemaText ? { from: registered.kwargs_schema, to: schemaText } : undefined,
    name: registered?.name ?? job.name,
    entrypoint,
    kwargs: job.kwargs ?? merged,
    runType: source.runType,
    preservationMode: preservationOf(source.preservationMode, registered, config),
    registeredName: registered?.name ?? null,
    runsGate: runsGateOf(registered),
    options: job.options,
    codeVersion: job.codeVersion,
  };
}

/** The gate a registration's max_active_runs puts its entry tasks behind (store/claims.ts). */
export function runsGateOf(registered: RegisteredJobRow | null | undefined): RunRequest["runsGate"] {
  return registered?.max_active_runs ? { gate: `runs:${registered.name}`, limit: Number(registered.max_active_runs) } : undefined;
}

/** CONTRACT §4 precedence: the request, the registration, the service default. */
export function preservationOf(
  requested: PreservationModeName | undefined,
  registered: RegisteredJobRow | null,
  config: Pick<Config, "defaultPreservationMode">,
): PreservationModeName {
  return requested ?? (registered?.preservation_mode as PreservationModeName | null) ?? config.defaultPreservationMode;
}

export async function startRun(db: Store, ids: IdGenerator, clock: Clock, config: Pick<Config, "taskTimeoutS">, run: RunRequest): Promise<JobRow> {
  return (await startRunIf(db, ids, clock, config, run, async () => true))!;
}

/**
 * As startRun, when `guard` (run first, in the same transaction) allows it; null when it does not.
 * A schedule's fire time is advanced this way: the advance and the run commit together, so a
 * process that dies between them loses neither the run nor the fire time.
 */
export async function startRunIf(
  db: Store,
  ids: IdGenerator,
  clock: Clock,
  config: Pick<Config, "taskTimeoutS">,
  run: RunRequest,
  guard: (tx: Store, jobId: bigint) => Promise<boolean>,
): Promise<JobRow | null> {
  const now = clock.now();
  const jobId = ids.next();
  // JSON from a request: {"object": name} names a data object for the job; a task marker's shape
  // is data, stored escaped (references.ts).
  const kwargs = toStoredJson(run.kwargs, "kwargs", "references");
  const job: JobRow = {
    id: jobId,
    name: run.name,
    status: "PENDING",
    run_type: run.runType,
    preservation_mode: run.preservationMode,
    registered_name: run.registeredName,
    entrypoint: run.entrypoint,
    kwargs,
    error: null,
    result_ref: null,
    created_at: BigInt(now),
    started_at: null,
    completed_at: null,
    code_version: run.codeVersion ?? null,
    priority: run.priority ?? 0,
    rerun_of: run.rerun?.of ?? null,
    rerun_from: run.rerun?.from ?? null,
  };
  // The entry task runs the job function itself; it builds the rest of the graph at run time.
  const entry = newTaskRow({
    id: ids.next(),
    jobId,
    name: run.name,
    kind: "job",
    entrypoint: run.entrypoint,
    kwargsJson: kwargs,
    options: run.options ?? {},
    defaultTimeoutMs: defaultTimeoutMsOf(config),
    nowMs: now,
    codeVersion: run.codeVersion ?? null,
  });
  // Every run's graph grows from the same root (see engine/task-identity.ts).
  entry.identity = ENTRY_IDENTITY;
  entry.priority = run.priority ?? 0;
  entry.gate = run.runsGate?.gate ?? null;
  entry.gate_limit = run.runsGate?.limit ?? null;
  if (run.refusal !== undefined) {
    Object.assign(job, { status: "FAILED", completed_at: BigInt(now), error: `task ${run.name} (${entry.id}) failed: ${run.refusal}` });
    Object.assign(entry, { status: "FAILED", error: run.refusal, completed_at: now });
  }
  const started = await db.transaction().execute(async (tx) => {
    if (!(await guard(tx, jobId))) return false;
    // Only the registration this run was planned from (one replaced meanwhile says its own).
    if (run.refreshedSchema !== undefined && run.registeredName !== null) await updateKwargsSchema(tx, run.registeredName, run.entrypoint, run.refreshedSchema.from, run.refreshedSchema.to);
    await insertJob(tx, job);
    await insertTask(tx, { ...entry, ready_at: run.refusal === undefined ? now : null });
    // A run refused at its start (its module does not load) is a failed run like any other.
    if (run.refusal !== undefined) await enqueueFailureNotification(tx, jobId, now, MAX_PENDING_NOTICES);
    return true;
  });
  // The row as created: a worker may already have claimed it, but the caller started a PENDING job.
  return started ? job : null;
}
