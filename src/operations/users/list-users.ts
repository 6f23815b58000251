// list_users: GET /users, admin only, in creation order.

import { UserFilter, UserPage } from "../../models/auth.js";
import { listUsers as listRows } from "../../store/users.js";
import { defineOperation } from "../define.js";
import { toUserView } from "../views.js";

export const listUsers = defineOperation({
  name: "list_users",
  summary: "List users in creation order",
  mutates: false,
  access: "admin",
  mcp: false,
  input: UserFilter,
  output: UserPage,
  http: { method: "GET", path: "/users" },
  cli: { command: "user list", examples: ["jobhouse user list"], columns: ["id", "username", "role", "disabled", "created_at"] },
  async handler({ limit, cursor }, { db }) {
    const { rows, total, nextCursor } = await listRows(db, limit, cursor);
    return { items: rows.map(toUserView), total, next_cursor: nextCursor };
  },
});
