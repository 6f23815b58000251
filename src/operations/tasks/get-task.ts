// get_task: one task with its arguments, result, log path, worker and dependencies.

import { TaskDetail, TaskIdInput } from "../../models/tasks.js";
import { requireTaskWithDependencies } from "../lookups.js";
import { defineOperation } from "../define.js";
import { toTaskDetail } from "../views.js";

export const getTask = defineOperation({
  name: "get_task",
  summary: "Get a task by id with its kwargs, result_ref, log_path, worker and dependencies",
  mutates: false,
  access: "viewer",
  cacheable: true,
  mcp: true,
  input: TaskIdInput,
  output: TaskDetail,
  http: { method: "GET", path: "/tasks/:id" },
  cli: { command: "task get <id>", examples: ["jobhouse task get 912370881995911168"] },
  async handler({ id }, { db }) {
    const { task, dependsOn } = await requireTaskWithDependencies(db, id);
    return toTaskDetail(task, dependsOn);
  },
});
