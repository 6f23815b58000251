// health: the liveness probe (GET /health, no authentication).

import { z } from "zod";
import { readApiToken } from "../../core/config.js";
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
  cli: { command: "health", examples: ["jobhouse health --json"] },
  async handler(_input, { config, clock, version }) {
    // The web app reads this before its first API call, to know which sign-in to offer.
    const auth = config.auth === "users" ? "users" : readApiToken() === null ? "none" : "token";
    return { status: "ok" as const, mode: config.mode, version, time: new Date(clock.now()).toISOString(), auth } as const;
  },
});
