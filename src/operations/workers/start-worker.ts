// start_worker: spawn a detached `worker start` process (distributed mode only, SPEC POST /workers).

import { invalid, unavailable } from "../../core/errors.js";
import { NoContent } from "../../models/common.js";
import { StartWorkerRequest } from "../../models/workers.js";
import { defineOperation } from "../define.js";
import { API_PREFIX } from "../paths.js";

export const startWorker = defineOperation({
  name: "start_worker",
  summary: "Start a worker process (distributed mode); poll list_workers to see it register",
  description: "Refused in local mode (422), where `local start` runs the worker in the server process.",
  mutates: true,
  access: "admin",
  mcp: true,
  input: StartWorkerRequest,
  output: NoContent,
  http: { method: "POST", path: "/workers", status: 202, errors: [503], conflicts: false, location: () => `${API_PREFIX}/workers` },
  cli: { command: "worker spawn", examples: ["jobhouse worker spawn --max-tasks 1000"], confirm: () => "Worker process started; see `jobhouse worker list`" },
  async handler({ max_tasks }, { config, spawnWorker }) {
    // SPEC POST /workers rule 1: a spawned child would deadlock on the shared data-path lock.
    if (config.mode === "local") {
      throw invalid("workers cannot be started in local mode: `jobhouse local start` runs the worker in the server process");
    }
    try {
      await spawnWorker(max_tasks ?? null);
    } catch (error) {
      throw unavailable(`could not start a worker process: ${(error as Error).message}`, "worker_spawn_failed");
    }
    return undefined;
  },
});

