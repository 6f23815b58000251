// get_me: who the caller is (GET /auth/me); the synthetic admin while authentication is off.

import { z } from "zod";
import { MeView } from "../../models/system.js";
import { defineOperation } from "../define.js";

export const getMe = defineOperation({
  name: "get_me",
  summary: "The calling principal",
  mutates: false,
  access: "viewer",
  mcp: false,
  input: z.object({}),
  output: MeView,
  http: { method: "GET", path: "/auth/me" },
  cli: { command: "whoami", examples: ["jobhouse whoami"] },
  async handler(_input, { principal }) {
    return { id: principal.user_id, username: principal.username, role: principal.role };
  },
});
