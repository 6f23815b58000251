// Row types of the orchestration store, as Kysely sees them. Timestamps are epoch milliseconds
// (BIGINT) in both dialects so that comparisons and arithmetic mean the same on SQLite and PostgreSQL.

import type { ColumnType, Insertable, Selectable } from "kysely";

/** A BIGINT: read as bigint (better-sqlite3 safe integers, pg int8 parser), written as number or bigint. */
export type Big = ColumnType<bigint, bigint | number, bigint | number>;
export type NullableBig = ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
/** Small integers also come back as bigint from SQLite's safe-integer mode; PostgreSQL INTEGER as number. */
export type Int = ColumnType<bigint | number, bigint | number, bigint | number>;
/** Booleans are written as 0/1: SQLite has no boolean and PostgreSQL accepts '0'/'1' as boolean input. */
export type Bool = ColumnType<boolean | number | bigint, number, number>;

export interface JobsTable {
  id: Big;
  name: string;
  status: string;
  run_type: string;
  preservation_mode: string;
  registered_name: string | null;
  entrypoint: string;
  kwargs: string;
  error: string | null;
  result_ref: string | null;
  created_at: Big;
  started_at: NullableBig;
  completed_at: NullableBig;
  /** The hash of the job's module graph when the run started (migration 005); null for a package. */
  code_version: string | null;
  /** The run this one re-runs (009), and from where: "failed" (reusing completed tasks) or "all". */
  rerun_of: NullableBig;
  rerun_from: string | null;
  /** Higher runs first (010). */
  priority: ColumnType<number, number | undefined, number>;
}

export interface TasksTable {
  /** The job's code_version (migration 005). */
  code_version: string | null;
  id: Big;
  job_id: Big;
  name: string;
  kind: string;
  entrypoint: string;
  status: string;
  attempt: Int;
  max_attempts: Int;
  kwargs: string;
  result_ref: string | null;
  error: string | null;
  log_path: string | null;
  worker_id: NullableBig;
  timeout_ms: NullableBig;
  backoff_ms: Big;
  pending_deps: Int;
  created_at: Big;
  ready_at: NullableBig;
  retry_after: NullableBig;
  claimed_at: NullableBig;
  started_at: NullableBig;
  completed_at: NullableBig;
  /** Its position in the job's graph, equal across runs of one entrypoint and kwargs (009). */
  identity: string | null;
  /** The task of an earlier run whose result this one reused instead of running (009). */
  reused_from: NullableBig;
  /** Its gate and the gate's limit (010): "task:<key>" or "runs:<registration>"; null for none. */
  gate: string | null;
  gate_limit: number | null;
  /** Its run's priority (010). */
  priority: ColumnType<number, number | undefined, number>;
}

export interface TaskDepsTable {
  task_id: Big;
  depends_on_id: Big;
}

export interface WorkersTable {
  id: Big;
  hostname: string;
  pid: Int;
  status: string;
  concurrency: Int;
  max_tasks: Int | null;
  started_at: Big;
  last_heartbeat: NullableBig;
  stopped_at: NullableBig;
  tasks_completed: Int;
  tasks_failed: Int;
}

export interface RegisteredJobsTable {
  name: string;
  entrypoint: string;
  schedule: string | null;
  timezone: string | null;
  enabled: Bool;
  defaults: string;
  preservation_mode: string | null;
  next_run_at: NullableBig;
  created_at: Big;
  updated_at: Big;
  /** JSON Schema of the kwargs (006); null when the job declares no schema. */
  kwargs_schema: string | null;
  /** Webhook told of failed runs (008); null for none. */
  on_failure: string | null;
  /** Runs RUNNING at once at most (010), and what a scheduled fire beyond it does ("queue" | "skip"). */
  max_active_runs: number | null;
  overlap: string | null;
}

export interface GatesTable {
  key: string;
}

/** An attempt of a task before its latest one: one that failed and was retried (migration 017). */
export interface TaskAttemptsTable {
  task_id: Big;
  attempt: Int;
  job_id: Big;
  worker_id: NullableBig;
  started_at: NullableBig;
  ended_at: Big;
  log_path: string | null;
  error: string | null;
}
export type TaskAttemptRow = Selectable<TaskAttemptsTable>;

/** A job this deployment deleted, until retention prunes it (migration 018): its logs are swept. */
export interface DeletedJobsTable {
  job_id: Big;
  deleted_at: Big;
}

export interface FailureNotificationsTable {
  job_id: Big;
  url: string;
  attempts: number;
  next_attempt_at: Big;
  created_at: Big;
}

export interface UsersTable {
  id: Big;
  username: string;
  password_hash: string;
  role: string;
  disabled: Bool;
  created_at: Big;
}

export interface RefreshTokensTable {
  id: Big;
  user_id: Big;
  token_hash: string;
  expires_at: Big;
  rotated_at: NullableBig;
  revoked_at: NullableBig;
  /** The id of the first token of the login this one descends from (migration 003). */
  chain_id: Big;
  created_at: Big;
}

export interface RunIdempotencyKeysTable {
  key: string;
  job_id: Big;
  fingerprint: string;
  created_at: Big;
}

export interface ObjectNameLocksTable {
  table_name: string;
  holder: string;
  expires_at: Big;
}

export interface LoginFailuresTable {
  id: Big;
  username: string;
  failed_at: Big;
}

export interface NodeLeasesTable {
  node: Int;
  holder: string;
  expires_at: Big;
}

export interface DataObjectsTable {
  id: Big;
  name: string;
  table_name: string;
  scope: string;
  job_id: NullableBig;
  task_id: NullableBig;
  created_at: Big;
  sort_sql: string | null;
  /** Row count and size as last measured (migrations/013); null until the first read after a write. */
  row_count: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  size_bytes: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Moves with every append: a measurement is stored only for the epoch it was taken in. */
  stats_epoch: ColumnType<number, number | undefined, number>;
}

/** The registry row of an object after it was dropped (migrations/011): the lineage keeps its node. */
export interface DroppedObjectsTable {
  id: Big;
  name: string;
  table_name: string;
  scope: string;
  job_id: NullableBig;
  created_at: Big;
  dropped_at: Big;
}

/** An object a running attempt replaced, waiting for the attempt's end (migrations/021). */
export interface ParkedObjectsTable {
  parked_table: string;
  object_id: Big;
  object_row: string;
  replacement_id: Big;
  task_id: Big;
  attempt: number;
  parked_at: Big;
}

/** An external input of a load: a file path or a URL (migrations/011). */
export interface ObjectSourcesTable {
  op_id: Big;
  object_id: Big;
  kind: string;
  location: string;
  format: string;
  size_bytes: NullableBig;
  loaded_at: Big;
}

export interface ObjectOpsTable {
  id: Big;
  object_id: Big;
  object_name: string;
  operation: string;
  sql_text: string;
  job_id: NullableBig;
  task_id: NullableBig;
  attempt: Int | null;
  created_at: Big;
}

export interface ObjectInputsTable {
  op_id: Big;
  object_id: Big;
  object_name: string;
  input_id: Big;
  input_name: string;
}

export interface ColumnLineageTable {
  object_id: Big;
  column_name: string;
  input_id: Big;
  input_name: string;
  input_column: string;
}

export interface Database {
  jobs: JobsTable;
  tasks: TasksTable;
  task_deps: TaskDepsTable;
  workers: WorkersTable;
  registered_jobs: RegisteredJobsTable;
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  login_failures: LoginFailuresTable;
  object_name_locks: ObjectNameLocksTable;
  run_idempotency_keys: RunIdempotencyKeysTable;
  failure_notifications: FailureNotificationsTable;
  task_attempts: TaskAttemptsTable;
  deleted_jobs: DeletedJobsTable;
  gates: GatesTable;
  node_leases: NodeLeasesTable;
  data_objects: DataObjectsTable;
  object_ops: ObjectOpsTable;
  object_inputs: ObjectInputsTable;
  column_lineage: ColumnLineageTable;
  dropped_objects: DroppedObjectsTable;
  parked_objects: ParkedObjectsTable;
  object_sources: ObjectSourcesTable;
}

export type JobRow = Selectable<JobsTable>;
export type NewJobRow = Insertable<JobsTable>;
export type TaskRow = Selectable<TasksTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;
export type NewTaskRow = Insertable<TasksTable>;
export type WorkerRow = Selectable<WorkersTable>;
export type RegisteredJobRow = Selectable<RegisteredJobsTable>;
export type UserRow = Selectable<UsersTable>;
export type DataObjectRow = Selectable<DataObjectsTable>;

export type ObjectOpRow = Selectable<ObjectOpsTable>;
