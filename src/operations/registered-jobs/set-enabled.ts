// enable_job and disable_job: switch a registered job's schedule on or off (manual runs still work).

import { nextFireTime } from "../../engine/schedule.js";
import { RegisteredJobName, RegisteredJobView } from "../../models/jobs.js";
import { setRegisteredJobEnabled } from "../../store/registered-jobs.js";
import { defineOperation } from "../define.js";
import type { OperationContext } from "../context.js";
import { requireRegisteredJob } from "../lookups.js";
import { toRegisteredJobView } from "../views.js";

async function setEnabled(name: string, enabled: boolean, { db, clock }: OperationContext) {
  const registered = await requireRegisteredJob(db, name);
  const now = clock.now();
  // Enabling a disabled schedule starts it from now: runs missed while disabled are not owed. An
  // enabled one keeps its own fire time (setRegisteredJobEnabled decides that in its statement).
  const nextRunAt = enabled && registered.schedule ? nextFireTime(registered.schedule, registered.timezone, now) : null;
  const updated = await setRegisteredJobEnabled(db, name, enabled, nextRunAt, now);
  return toRegisteredJobView(updated ?? (await requireRegisteredJob(db, name)));
}

export const enableJob = defineOperation({
  name: "enable_job",
  summary: "Enable a registered job's schedule",
  mutates: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  input: RegisteredJobName,
  output: RegisteredJobView,
  http: { method: "POST", path: "/registered-jobs/:name/enable", conflicts: false },
  cli: { command: "job enable <name>", examples: ["jobhouse job enable nightly_sales"], confirm: (r: RegisteredJobView) => `Enabled job ${r.name}` },
  handler: ({ name }, ctx) => setEnabled(name, true, ctx),
});

export const disableJob = defineOperation({
  name: "disable_job",
  summary: "Disable a registered job's schedule; it can still be run by hand",
  mutates: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  input: RegisteredJobName,
  output: RegisteredJobView,
  http: { method: "POST", path: "/registered-jobs/:name/disable", conflicts: false },
  cli: { command: "job disable <name>", examples: ["jobhouse job disable nightly_sales"], confirm: (r: RegisteredJobView) => `Disabled job ${r.name}` },
  handler: ({ name }, ctx) => setEnabled(name, false, ctx),
});
