// health: the liveness probe (GET /health, no authentication).

import { z } from "zod";
import { HealthView } from "../../models/system.js";
import { defineOperation } from "../define.js";

export const health = defineOperation({
  name: "health",
  summary: "Liveness probe",
  mutates: false,
  access: "public",
  mcp: false,
  input: z.object({}),
  output: HealthView,
  http: { method: "GET", path: "/health", absolute: true, ignoreQuery: true },
  cli: { command: "health" },
  async handler(_input, { config, clock, version }) {
    return { status: "ok" as const, mode: config.mode, version, time: new Date(clock.now()).toISOString() };
  },
});
