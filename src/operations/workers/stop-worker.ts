// stop_worker: ask a worker to stop; it finishes or abandons its tasks and exits on its own.

import { conflict } from "../../core/errors.js";
import { WorkerIdInput, WorkerView } from "../../models/workers.js";
import { markWorkerStopping } from "../../store/workers.js";
import { defineOperation } from "../define.js";
import { requireWorker } from "../lookups.js";
import { toWorkerView } from "../views.js";

export const stopWorker = defineOperation({
  name: "stop_worker",
  summary: "Stop a worker: it becomes STOPPING and exits on its own polling loop",
  mutates: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  input: WorkerIdInput,
  output: WorkerView,
  http: { method: "POST", path: "/workers/:id/stop" },
  cli: { command: "worker stop <id>", examples: ["jobhouse worker stop 912370881991716870"], confirm: (w: WorkerView) => `Worker ${w.id} is ${w.status}` },
  async handler({ id }, { db }) {
    const worker = await requireWorker(db, id);
    const stopping = await markWorkerStopping(db, id);
    // The guard touched nothing: the worker was already stopping, stopped or lost.
    if (!stopping) throw conflict(`worker ${id} is already ${(await requireWorker(db, id)).status || worker.status}`, "worker_not_active");
    return toWorkerView(stopping);
  },
});
