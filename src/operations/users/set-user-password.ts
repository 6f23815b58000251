// set_user_password: PUT /users/{ref}/password → 204, admin only (`user passwd` reads the password
// from standard input when --password is not given). Every refresh token of the user is revoked:
// whoever knew the old password logs in again.

import { checkPasswordRules, hashPassword } from "../../core/passwords.js";
import { NoContent } from "../../models/common.js";
import { SetPasswordRequest } from "../../models/auth.js";
import { revokeUserTokens } from "../../store/refresh-tokens.js";
import { setPasswordHash } from "../../store/users.js";
import { defineOperation } from "../define.js";
import { requireUser } from "../lookups.js";

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
  async handler({ ref, password }, { db, clock }) {
    checkPasswordRules(password);
    const user = await requireUser(db, ref);
    await setPasswordHash(db, user.id, await hashPassword(password));
    await revokeUserTokens(db, user.id, clock.now());
    return undefined;
  },
});
