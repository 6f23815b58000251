// create_user: POST /users (CONTRACT §6, §8), admin only; `user create` reads the password from
// standard input when --password is not given.

import { conflict } from "../../core/errors.js";
import { checkPasswordRules, hashPassword } from "../../core/passwords.js";
import { CreateUserRequest, UserView } from "../../models/auth.js";
import { NOT_ADMIN, findUserById, findUserByNameInAnyCase, insertUserGuarded } from "../../store/users.js";
import { defineOperation } from "../define.js";
import { API_PREFIX } from "../paths.js";
import { toUserView } from "../views.js";
import { actingAdminId, noLongerAdmin } from "./acting-admin.js";

export const createUser = defineOperation({
  name: "create_user",
  summary: "Create a user with a password and a role (admin or viewer)",
  mutates: true,
  access: "admin",
  mcp: false,
  input: CreateUserRequest,
  output: UserView,
  http: { method: "POST", path: "/users", status: 201, location: (u: { id: string }) => `${API_PREFIX}/users/${u.id}` },
  cli: { command: "user create", examples: ["jobhouse user create --username alice --role viewer   # reads the password from standard input"], stdin: "password", confirm: (u: { username: string; role: string }) => `Created ${u.role} ${u.username}` },
  async handler({ username, password, role }, ctx) {
    checkPasswordRules(password);
    const id = ctx.ids.next();
    const inserted = await insertUserGuarded(ctx.db, { id, username, passwordHash: await hashPassword(password), role, nowMs: ctx.clock.now() }, actingAdminId(ctx));
    if (inserted === NOT_ADMIN) throw noLongerAdmin(ctx);
    if (!inserted) {
      const taken = (await findUserByNameInAnyCase(ctx.db, username))?.username ?? username;
      throw conflict(taken === username ? `a user is already named "${username}"` : `a user is already named "${taken}": names must differ in more than letter case`, "name_taken");
    }
    return toUserView((await findUserById(ctx.db, id))!);
  },
});
