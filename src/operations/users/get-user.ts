// get_user: GET /users/{ref} (an id or a username), admin only.

import { UserRefInput, UserView } from "../../models/auth.js";
import { defineOperation } from "../define.js";
import { requireUser } from "../lookups.js";
import { toUserView } from "../views.js";

export const getUser = defineOperation({
  name: "get_user",
  summary: "Get a user by id or username",
  mutates: false,
  access: "admin",
  mcp: false,
  input: UserRefInput,
  output: UserView,
  http: { method: "GET", path: "/users/:ref", errors: [404] },
  cli: { command: "user get <ref>", examples: ["jobhouse user get alice"] },
  async handler({ ref }, { db }) {
    return toUserView(await requireUser(db, ref));
  },
});
