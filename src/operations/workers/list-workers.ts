// list_workers: workers, newest first, filtered by status.

import { WorkerFilter, WorkerPage } from "../../models/workers.js";
import { listWorkers as listRows } from "../../store/workers.js";
import { defineOperation } from "../define.js";
import { toWorkerView } from "../views.js";

export const listWorkers = defineOperation({
  name: "list_workers",
  summary: "List workers, newest first, filtered by status",
  mutates: false,
  access: "viewer",
  cacheable: true,
  mcp: true,
  input: WorkerFilter,
  output: WorkerPage,
  http: { method: "GET", path: "/workers" },
  cli: { command: "worker list", examples: ["jobhouse worker list --status ACTIVE"], columns: ["id", "status", "hostname", "pid", "concurrency", "tasks_completed", "tasks_failed", "last_heartbeat"] },
  async handler(filter, { db }) {
    const { rows, total, nextCursor } = await listRows(db, filter);
    return { items: rows.map(toWorkerView), total, next_cursor: nextCursor };
  },
});
