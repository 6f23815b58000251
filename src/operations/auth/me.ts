// get_me: who the caller is (GET /auth/me); the synthetic admin while authentication is off.

import { z } from "zod";
import { MeView } from "../../models/system.js";
import { findUserById } from "../../store/users.js";
import { defineOperation } from "../define.js";
import { ID_PATTERN } from "../lookups.js";

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
  async handler(_input, { principal, config, db }) {
    // The username from the users table: SPEC's access-token claims are sub, role, exp and type,
    // so a token need not name its user. The role stays the token's (trusted until it expires).
    const user = config.auth === "users" && ID_PATTERN.test(principal.user_id) ? await findUserById(db, BigInt(principal.user_id)) : undefined;
    return { id: principal.user_id, username: user?.username ?? principal.username, role: principal.role };
  },
});
