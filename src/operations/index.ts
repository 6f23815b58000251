// The registry: every operation the service offers, on one screen. Surfaces loop over it.

import type { AnyOperation } from "./define.js";
import { cancelJob } from "./jobs/cancel-job.js";
import { getJob } from "./jobs/get-job.js";
import { jobStats } from "./jobs/job-stats.js";
import { listJobs } from "./jobs/list-jobs.js";
import { runJob } from "./jobs/run-job.js";
import { deleteObject } from "./objects/delete-object.js";
import { getObject } from "./objects/get-object.js";
import { listObjects } from "./objects/list-objects.js";
import { purgeObjects } from "./objects/purge-objects.js";
import { listRegisteredJobs } from "./registered-jobs/list-registered-jobs.js";
import { registerJob } from "./registered-jobs/register-job.js";
import { disableJob, enableJob } from "./registered-jobs/set-enabled.js";
import { login, logout, refreshToken } from "./auth/login.js";
import { getMe } from "./auth/me.js";
import { health } from "./system/health.js";
import { ready } from "./system/ready.js";
import { setup } from "./system/setup.js";
import { listJobAttempts } from "./jobs/list-job-attempts.js";
import { getTask } from "./tasks/get-task.js";
import { disableUser, enableUser, setUserRole } from "./users/change-user.js";
import { createUser } from "./users/create-user.js";
import { getUser } from "./users/get-user.js";
import { listUsers } from "./users/list-users.js";
import { setUserPassword } from "./users/set-user-password.js";
import { getTaskLogs } from "./tasks/get-task-logs.js";
import { listWorkers } from "./workers/list-workers.js";
import { startWorker } from "./workers/start-worker.js";
import { stopWorker } from "./workers/stop-worker.js";

export const operations: readonly AnyOperation[] = [
  // jobs
  listJobs,
  getJob,
  jobStats,
  listJobAttempts,
  cancelJob,
  runJob,
  // registered jobs
  registerJob,
  listRegisteredJobs,
  enableJob,
  disableJob,
  // workers
  listWorkers,
  startWorker,
  stopWorker,
  // objects
  listObjects,
  getObject,
  deleteObject,
  purgeObjects,
  // tasks
  getTask,
  getTaskLogs,
  // authentication and users
  login,
  refreshToken,
  logout,
  getMe,
  createUser,
  listUsers,
  getUser,
  setUserRole,
  disableUser,
  enableUser,
  setUserPassword,
  // system
  health,
  ready,
  setup,
] as unknown as AnyOperation[];

export const operationByName = new Map(operations.map((op) => [op.name, op]));

export { checkInputBesides, checkRole, invoke, describeIssues, parseInput } from "./invoke.js";
export { API_PREFIX, fillPath, mountedPath, pathParams } from "./paths.js";
export type { Access, AnyOperation, Operation, HttpBinding, CliBinding } from "./define.js";
export { inputModelOf, requiredRole } from "./define.js";
export type { OperationContext, ServiceContext, Principal, Role } from "./context.js";
export { SYNTHETIC_ADMIN } from "./context.js";
export type { WorkerSpawner } from "./context.js";
