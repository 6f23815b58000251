// set_user_password: PUT /users/{ref}/password → 204, admin only (`user passwd` reads the password
// from standard input when --password is not given). Every refresh token of the user is revoked:
// whoever knew the old password logs in again.

import { checkPasswordRules, hashPassword } from "../../core/passwords.js";
import { NoContent } from "../../models/common.js";
import { SetPasswordRequest } from "../../models/auth.js";
import { NOT_ADMIN, setPasswordGuarded } from "../../store/users.js";
import { notFound } from "../../core/errors.js";
import { defineOperation } from "../define.js";
import { requireUser } from "../lookups.js";
import { actingAdminId, noLongerAdmin } from "./acting-admin.js";

export const setUserPassword = defineOperation({
  name: "set_user_password",
  summary: "Set a user's password (their refresh tokens are revoked)",
  mutates: true,
  access: "admin",
  mcp: false,
  input: SetPasswordRequest,
  output: NoContent,
  http: { method: "PUT", path: "/users/:ref/password", status: 204, errors: [404], conflicts: false },
  cli: { command: "user passwd <ref>", examples: ["jobhouse user passwd alice        # reads the new password from standard input"], stdin: "password", confirm: () => "Password changed" },
  async handler({ ref, password }, ctx) {
    checkPasswordRules(password);
    const user = await requireUser(ctx.db, ref);
    const hash = await hashPassword(password);
    // The new hash and the revocation of every refresh token in one transaction.
    const set = await setPasswordGuarded(ctx.db, user.id, hash, actingAdminId(ctx), ctx.clock.now());
    if (set === NOT_ADMIN) throw noLongerAdmin(ctx);
    if (!set) throw notFound(`user ${ref} does not exist`);
    return undefined;
  },
});
