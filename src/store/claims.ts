// Claiming ready tasks for a worker: one atomic UPDATE … RETURNING, so two workers never claim the
// same task. A worker claims only for free slots and starts the code at once, so the claim records
// the start too: PENDING → CLAIMED → RUNNING in one commit (started_at, log_path), one statement
// per task less than a separate CLAIMED → RUNNING update. PostgreSQL adds FOR UPDATE SKIP LOCKED
// so concurrent claimers skip each other's rows instead of queueing; SQLite has a single writer.

import { sql } from "kysely";
import { OPEN_TASK_STATUSES } from "../core/statuses.js";
import { statusGuard } from "./by-id.js";
import { type Store, isPostgres } from "./db.js";
import type { TaskRow } from "./schema.js";
import { prepared } from "./prepared.js";
import { type Completion, type LeafCompletion, type LeafValues, completeTask, isLeaf, leafCompletionCtes } from "./transitions.js";

export interface ClaimResult {
  tasks: TaskRow[];
  /** The worker's own status; only an ACTIVE worker claims (a LOST one must not take its retries back). */
  workerStatus: string | undefined;
  /** Jobs this claim moved from PENDING to RUNNING. */
  startedJobs: bigint[];
  /** Of the request's `settledCandidates`, the jobs with no open task left. */
  settledJobs: bigint[];
  /**
   * When nothing was claimed: when a waiting task (a retry in its backoff) becomes ready, the first
   * in claim order, read along the claim index: the earliest of the highest priority that has one.
   * A lower priority's task due sooner is found by the next poll.
   */
  nextReadyAt?: number;
}

export interface ClaimRequest {
  workerId: bigint;
  limit: number;
  nowMs: number;
  /** Each attempt logs to <logDir>/<job_id>/<task_id>/<attempt>.log (CONTRACT §4). */
  logDir: string;
  /**
   * Jobs in which this worker's tasks ended since its last claim: are any of their tasks still
   * open? Asked here rather than after each completion, one statement per task less. The claim
   * runs after those completions committed, so it sees them, and whichever worker commits a job's
   * last task sees every other end of that job in its next claim.
   */
  settledCandidates?: bigint[];
  /**
   * Claim only the tasks behind this gate (see claimGatedTasks), which its caller holds; without
   * it, only ungated tasks. A gated task is never claimed by the ordinary claim.
   */
  gate?: string;
}

export async function claimReadyTasks(db: Store, request: ClaimRequest): Promise<ClaimResult> {
  return isPostgres(db) ? claimOnPostgres(db, request) : claimOnSqlite(db, request);
}

/**
 * The attempt's log path, built by the claim itself (both dialects concatenate with ||), from the
 * log folder without its trailing slash (trimmedLogDir).
 */
const trimmedLogDir = (logDir: string) => logDir.replace(/(.)\/+$/, "$1");
const logPathSql = (logDir: string) =>
  sql<string>`${logDir} || '/' || CAST(job_id AS TEXT) || '/' || CAST(id AS TEXT) || '/' || CAST(attempt AS TEXT) || '.log'`;

type ClaimRow = Partial<TaskRow> & {
  worker_status: string | null;
  started_jobs: string[] | null;
  settled_jobs: string[] | null;
  next_ready_at: bigint | null;
  /** Only in the completing claim: the completed task's job (null when the completion came too late). */
  done_job_id?: bigint | null;
};

/** Ungated tasks only, or only those behind `gate` (the ordinary claim never takes gated ones). */
const gateSql = (gate: string | undefined) => (gate === undefined ? sql<boolean>`gate IS NULL` : sql<boolean>`gate = ${gate}`);

/** A claim's values as PostgreSQL's claim statements bind them (prepared: see claimStatements). */
export interface ClaimValues {
  workerId: bigint;
  limit: number;
  nowMs: number;
  /** Without its trailing slash. */
  logDir: string;
  /** The settled candidates' ids, as text for a bigint[] parameter. */
  settled: string[];
  gate: string | undefined;
}

export const claimValues = ({ workerId, limit, nowMs, logDir, settledCandidates, gate }: ClaimRequest): ClaimValues => ({
  workerId,
  limit: Math.max(0, limit),
  nowMs,
  logDir: trimmedLogDir(logDir),
  settled: (settledCandidates ?? []).map(String),
  gate,
});

/**
 * The claim as common table expressions (w, picked, claimed, started, settled) and the select that
 * reads them: the worker's status under FOR SHARE (the lost-worker reaper waits for this claim to
 * commit, then sees and retries what it took, or the claim sees LOST and takes nothing), the ready
 * tasks under FOR UPDATE SKIP LOCKED, RUNNING, and their jobs RUNNING when this is their first
 * claim. Shared by the claim alone and the completion that claims the slot's next task.
 *
 * Written so that a generic plan (a worker's connections use one: see ENGINE_PLAN_SETTINGS in
 * db.ts) finds every row by key whatever the statistics were when it was made: the rows to update
 * as `id = ANY (ARRAY(…))` with a status test no index serves (`IS NOT DISTINCT FROM`), so the
 * primary key is the only way in, and each open status of a settled candidate as its own
 * `NOT EXISTS` on (job_id, status), kept a subplan by `OFFSET 0`. As joins, a plan made while the
 * tables were small walked every PENDING task and job (or scanned every open task) per claim.
 */
function claimCtes(v: ClaimValues, gated: boolean) {
  return sql`
    w AS (SELECT status FROM workers WHERE id = ${v.workerId} FOR SHARE),
    picked AS (
      SELECT id FROM tasks
      WHERE status = 'PENDING' AND pending_deps = 0 AND ready_at <= ${v.nowMs} AND ${gateSql(gated ? v.gate : undefined)} AND (SELECT status FROM w) = 'ACTIVE'
      ORDER BY priority DESC, ready_at, id
      LIMIT ${v.limit}
      FOR UPDATE SKIP LOCKED),
    claimed AS (
      UPDATE tasks SET status = 'RUNNING', worker_id = ${v.workerId}, claimed_at = ${v.nowMs}, started_at = ${v.nowMs}, log_path = ${logPathSql(v.logDir)}
      WHERE id = ANY (ARRAY(SELECT id FROM picked)) AND status IS NOT DISTINCT FROM 'PENDING'
      RETURNING *),
    started AS (
      UPDATE jobs SET status = 'RUNNING', started_at = ${v.nowMs}
      WHERE id = ANY (ARRAY(SELECT job_id FROM claimed)) AND status IS NOT DISTINCT FROM 'PENDING'
      RETURNING id),
    settled AS (
      SELECT c.id FROM unnest(${v.settled}::bigint[]) AS c(id)
      WHERE ${sql.join(
        OPEN_TASK_STATUSES.map((status) => sql`NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = c.id AND status = ${sql.lit(status)} OFFSET 0)`),
        sql` AND `,
      )})`;
}

function claimSelect(v: ClaimValues) {
  return sql`
    (SELECT status FROM w) AS worker_status, (SELECT json_agg(id::text) FROM started) AS started_jobs,
    (SELECT json_agg(id::text) FROM settled) AS settled_jobs,
    CASE WHEN NOT EXISTS (SELECT 1 FROM claimed) THEN
      (SELECT ready_at FROM tasks WHERE status = 'PENDING' AND pending_deps = 0 AND ready_at > ${v.nowMs} ORDER BY priority DESC, ready_at LIMIT 1) END AS next_ready_at,
    claimed.*`;
}

/** The completed task's values in the completing claim, named apart from the claim's own. */
interface DoneValues {
  doneTaskId: bigint;
  doneWorkerId: bigint;
  doneAttempt: number;
  resultJson: string;
  doneAtMs: number;
}

/** The statement of a leaf completion that claims the slot's next task (a test reads its plan). */
export function completeLeafAndClaimStatement(done: LeafValues, claim: ClaimValues, gated: boolean) {
  return sql<ClaimRow>`
    WITH ${leafCompletionCtes(done)},
    ${claimCtes(claim, gated)}
    SELECT (SELECT job_id FROM done) AS done_job_id, ${claimSelect(claim)}
    FROM (SELECT 1) AS one LEFT JOIN claimed ON true`;
}

/** PostgreSQL's claim statements, built once per shape (gated or not). */
const claimStatements = {
  alone: prepared((_db, v: ClaimValues, given) =>
    sql<ClaimRow>`
      WITH ${claimCtes(v, given.gate)}
      SELECT ${claimSelect(v)}
      FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
  ),
  afterCompletion: prepared((_db, v: ClaimValues & DoneValues, given) =>
    completeLeafAndClaimStatement({ taskId: v.doneTaskId, workerId: v.doneWorkerId, attempt: v.doneAttempt, resultJson: v.resultJson, nowMs: v.doneAtMs }, v, given.gate),
  ),
};

function readClaimRows(rows: ClaimRow[]): ClaimResult {
  const first = rows[0];
  const tasks = rows
    .filter((r) => r.id != null)
    .map(({ worker_status: _s, started_jobs: _j, settled_jobs: _d, next_ready_at: _n, done_job_id: _c, ...task }) => task as TaskRow);
  return {
    tasks,
    workerStatus: first?.worker_status ?? undefined,
    startedJobs: (first?.started_jobs ?? []).map(BigInt),
    settledJobs: (first?.settled_jobs ?? []).map(BigInt),
    nextReadyAt: first?.next_ready_at == null ? undefined : Number(first.next_ready_at),
  };
}

/** One statement, one round trip (see claimCtes). */
async function claimOnPostgres(db: Store, request: ClaimRequest): Promise<ClaimResult> {
  return readClaimRows(await claimStatements.alone.rows(db, claimValues(request)));
}

/**
 * completeTask, and when `next` is given and the completion is a leaf on PostgreSQL, the claim of
 * the slot's next task in the same statement; `claim` is undefined when no claim was made.
 */
export async function completeTaskAndClaim(db: Store, c: Completion, next: ClaimRequest | undefined): Promise<{ completed: boolean; jobId?: bigint; claim?: ClaimResult }> {
  if (next && isPostgres(db) && isLeaf(c)) return completeLeafAndClaimOnPostgres(db, c, next);
  return completeTask(db, c);
}

/**
 * A leaf completion (no children, no references in its result: see completeTask) and the claim of
 * the slot's next task in one statement: one round trip per task instead of two while work is
 * queued. The claim reads the statement's snapshot, so it cannot take the dependents this
 * completion releases (they wake the worker like any other ready task), nor count this task as
 * ended when it asks which jobs settled (the caller asks about this task's job next time).
 */
async function completeLeafAndClaimOnPostgres(db: Store, c: LeafCompletion, request: ClaimRequest): Promise<{ completed: boolean; jobId?: bigint; claim: ClaimResult }> {
  const done: DoneValues = { doneTaskId: c.key.taskId, doneWorkerId: c.key.workerId, doneAttempt: c.key.attempt, resultJson: c.resultJson, doneAtMs: c.nowMs };
  const rows = await claimStatements.afterCompletion.rows(db, Object.assign(claimValues(request), done));
  const jobId = rows[0]?.done_job_id ?? undefined;
  return { completed: jobId != null, jobId: jobId ?? undefined, claim: readClaimRows(rows) };
}

/** SQLite has one writer: an IMMEDIATE transaction holds off every other claimer and the reaper. */
async function claimOnSqlite(db: Store, request: ClaimRequest): Promise<ClaimResult> {
  return db.transaction().execute((tx) => claimInSqliteTransaction(tx, request));
}

async function claimInSqliteTransaction(tx: Store, { workerId, limit, nowMs, logDir, settledCandidates = [], gate }: ClaimRequest): Promise<ClaimResult> {
  const settledJobs = await settledAmong(tx, settledCandidates);
  const worker = await sqliteClaim.workerStatus.first(tx, { workerId });
  if (worker?.status !== "ACTIVE" || limit <= 0) return { tasks: [], workerStatus: worker?.status, startedJobs: [], settledJobs };
  // Ids first, then the update by primary key: as one statement with a subquery, SQLite plans the
  // outer update over every pending task, which at 10,000 pending tasks costs more than the work.
  const ready = await sqliteClaim.ready.rows(tx, { nowMs: BigInt(nowMs), limit, gate });
  if (ready.length === 0) {
    const next = await tx
      .selectFrom("tasks")
      .select("ready_at as at")
      .where("status", "=", "PENDING")
      .where("pending_deps", "=", 0)
      .where("ready_at", ">", BigInt(nowMs))
      .orderBy("priority", "desc")
      .orderBy("ready_at")
      .limit(1)
      .executeTakeFirst();
    return { tasks: [], workerStatus: worker.status, startedJobs: [], settledJobs, nextReadyAt: next?.at == null ? undefined : Number(next.at) };
  }
  const claimed = await sqliteClaim.run.rows(tx, { ids: idList(ready.map((r) => r.id)), workerId, nowMs, logDir: trimmedLogDir(logDir) });
  let startedJobs: bigint[] = [];
  if (claimed.length > 0) {
    // CONTRACT §3: a job becomes RUNNING when its first task is claimed.
    const started = await sqliteClaim.startJobs.rows(tx, { ids: idList(new Set(claimed.map((t) => t.job_id))), nowMs });
    startedJobs = started.map((j) => j.id);
  }
  return { tasks: claimed, workerStatus: worker.status, startedJobs, settledJobs };
}

/**
 * A list of ids as one value, a JSON array that SQLite's json_each reads: a statement whose lists
 * vary in length is then one prepared statement (Kysely's `in` makes a text per length).
 */
const idList = (ids: Iterable<bigint>): string => `[${[...ids].join(",")}]`;
const inIdList = (list: string) => sql<bigint>`(SELECT value FROM json_each(${list}))`;

/** The SQLite claim's statements (see claimInSqliteTransaction), built once. */
const sqliteClaim = {
  workerStatus: prepared((db, v: { workerId: bigint }) => db.selectFrom("workers").select("status").where("id", "=", v.workerId)),
  // Ready tasks in claim order: ungated ones, or only those behind the gate given.
  ready: prepared((db, v: { nowMs: bigint; limit: number; gate: string | undefined }, given) =>
    db
      .selectFrom("tasks")
      .select("id")
      .where("status", "=", "PENDING")
      .where("pending_deps", "=", 0)
      .where("ready_at", "<=", v.nowMs)
      .where(gateSql(given.gate ? v.gate : undefined))
      .orderBy("priority", "desc")
      .orderBy("ready_at")
      .orderBy("id")
      .limit(v.limit),
  ),
  run: prepared((db, v: { ids: string; workerId: bigint; nowMs: number; logDir: string }) =>
    db
      .updateTable("tasks")
      .set({ status: "RUNNING", worker_id: v.workerId, claimed_at: v.nowMs, started_at: v.nowMs, log_path: logPathSql(v.logDir) })
      .where("id", "in", inIdList(v.ids))
      .where(statusGuard(db, "PENDING"))
      .returningAll(),
  ),
  startJobs: prepared((db, v: { ids: string; nowMs: number }) =>
    db.updateTable("jobs").set({ status: "RUNNING", started_at: v.nowMs }).where("id", "in", inIdList(v.ids)).where("status", "=", "PENDING").returning("id"),
  ),
  settled: prepared((db, v: { ids: string }) =>
    db
      .selectFrom("jobs")
      .select("id")
      .where("id", "in", inIdList(v.ids))
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("tasks").select(sql`1`.as("one")).whereRef("tasks.job_id", "=", "jobs.id").where("tasks.status", "in", OPEN_TASK_STATUSES))),
      ),
  ),
};

/**
 * Claims gated tasks (run limits, store/migrations/010): for each gate with ready tasks, under a
 * lock on its `gates` row (on SQLite the one writer serializes anyway), counts what already runs
 * behind it and claims at most the difference: two workers can never both see a free place. A
 * "task:<key>" gate counts its tasks CLAIMED or RUNNING; a "runs:<registration>" gate counts the
 * registration's RUNNING jobs (a job is RUNNING from its entry task's claim to its end).
 */
export async function claimGatedTasks(db: Store, request: ClaimRequest): Promise<ClaimResult> {
  const result: ClaimResult = { tasks: [], workerStatus: undefined, startedJobs: [], settledJobs: [] };
  if (request.limit <= 0) return result;
  const gates = await db
    .selectFrom("tasks")
    .select(["gate", "gate_limit"])
    .distinct()
    .where("status", "=", "PENDING")
    .where("pending_deps", "=", 0)
    .where("ready_at", "<=", BigInt(request.nowMs))
    .where("gate", "is not", null)
    .limit(20)
    .execute();
  let budget = request.limit;
  for (const { gate, gate_limit: limit } of gates) {
    if (budget <= 0 || gate === null) break;
    const claim = await db.transaction().execute(async (tx) => {
      if (isPostgres(tx)) {
        await tx.insertInto("gates").values({ key: gate }).onConflict((oc) => oc.doNothing()).execute();
        await tx.selectFrom("gates").select("key").where("key", "=", gate).forUpdate().execute();
      }
      const free = Math.min(budget, Number(limit ?? 1) - (await activeBehind(tx, gate)));
      if (free <= 0) return null;
      const gated: ClaimRequest = Object.assign({}, request, { limit: free, gate, settledCandidates: [] });
      return isPostgres(tx) ? claimOnPostgres(tx, gated) : claimInSqliteTransaction(tx, gated);
    });
    if (!claim) continue;
    budget -= claim.tasks.length;
    result.tasks.push(...claim.tasks);
    result.startedJobs.push(...claim.startedJobs);
    result.workerStatus = claim.workerStatus;
  }
  return result;
}

async function activeBehind(tx: Store, gate: string): Promise<number> {
  const row = gate.startsWith("runs:")
    ? await tx.selectFrom("jobs").select((eb) => eb.fn.countAll<string>().as("n")).where("registered_name", "=", gate.slice("runs:".length)).where("status", "=", "RUNNING").executeTakeFirstOrThrow()
    : await tx.selectFrom("tasks").select((eb) => eb.fn.countAll<string>().as("n")).where("gate", "=", gate).where("status", "in", ["CLAIMED", "RUNNING"]).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The jobs among `candidates` with no open task left. NOT EXISTS stops at a job's first open task;
 * a DISTINCT over the open tasks read every one of them (290 µs per claim with 10,000 pending).
 */
async function settledAmong(tx: Store, candidates: bigint[]): Promise<bigint[]> {
  if (candidates.length === 0) return [];
  return (await sqliteClaim.settled.rows(tx, { ids: idList(candidates) })).map((r) => r.id);
}
