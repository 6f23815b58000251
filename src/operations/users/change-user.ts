// set_user_role, disable_user and enable_user: PUT /users/{ref}/role, POST /users/{ref}/disable and
// POST /users/{ref}/enable, admin only.
// The last enabled admin can be neither demoted nor disabled (409 last_admin), whatever races it.
// A disabled user's refresh tokens are revoked at once; their access token lapses on its own.

import { conflict, notFound } from "../../core/errors.js";
import { SetRoleRequest, UserRefInput, UserView } from "../../models/auth.js";
import { type AdminGuardedChange, NOT_ADMIN, changeUserGuarded } from "../../store/users.js";
import type { OperationContext } from "../context.js";
import { defineOperation } from "../define.js";
import { requireUser } from "../lookups.js";
import { toUserView } from "../views.js";
import { actingAdminId, noLongerAdmin } from "./acting-admin.js";

/** Disabling revokes the user's refresh tokens in the same transaction. */
async function change(ctx: OperationContext, ref: string, what: AdminGuardedChange) {
  const user = await requireUser(ctx.db, ref);
  const revokeTokensAtMs = "disabled" in what && what.disabled ? ctx.clock.now() : undefined;
  const changed = await changeUserGuarded(ctx.db, user.id, what, { actorId: actingAdminId(ctx), revokeTokensAtMs });
  if (changed === undefined) throw notFound(`user ${ref} does not exist`);
  if (changed === NOT_ADMIN) throw noLongerAdmin(ctx);
  if (changed === "last_admin") throw conflict(`${user.username} is the last enabled admin: make another admin first`, "last_admin");
  return changed;
}

export const setUserRole = defineOperation({
  name: "set_user_role",
  summary: "Change a user's role (takes effect at their next token refresh, within one access-token lifetime)",
  mutates: true,
  access: "admin",
  mcp: false,
  input: SetRoleRequest,
  output: UserView,
  http: { method: "PUT", path: "/users/:ref/role", errors: [404] },
  cli: { command: "user set-role <ref>", examples: ["jobhouse user set-role alice --role admin"], confirm: (u: { username: string; role: string }) => `${u.username} is now ${u.role}` },
  async handler({ ref, role }, ctx) {
    return toUserView(await change(ctx, ref, { role }));
  },
});

export const disableUser = defineOperation({
  name: "disable_user",
  summary: "Disable a user: no login, no refresh (an access token already issued lapses within its lifetime)",
  mutates: true,
  access: "admin",
  mcp: false,
  input: UserRefInput,
  output: UserView,
  http: { method: "POST", path: "/users/:ref/disable", errors: [404] },
  cli: { command: "user disable <ref>", examples: ["jobhouse user disable alice"], confirm: (u: { username: string }) => `Disabled ${u.username}` },
  async handler({ ref }, ctx) {
    return toUserView(await change(ctx, ref, { disabled: true }));
  },
});

/** Beside disable_user: without it a disabled user could come back only through SQL. */
export const enableUser = defineOperation({
  name: "enable_user",
  summary: "Enable a disabled user again: they can log in (their old sessions stay revoked)",
  mutates: true,
  access: "admin",
  mcp: false,
  input: UserRefInput,
  output: UserView,
  http: { method: "POST", path: "/users/:ref/enable", errors: [404] },
  cli: { command: "user enable <ref>", examples: ["jobhouse user enable alice"], confirm: (u: { username: string }) => `Enabled ${u.username}` },
  async handler({ ref }, ctx) {
    return toUserView(await change(ctx, ref, { disabled: false }));
  },
});
