// Who acts in a change of users, and the refusal when they are no longer an admin: an access
// token's role claim is trusted until it expires (SPEC Scheme B rule 7), but within that time a
// demoted or disabled admin must not restore their own role or lock out the admin who acted.

import { forbidden } from "../../core/errors.js";
import { SYNTHETIC_ADMIN, type OperationContext } from "../context.js";

/** The acting user's id, re-checked by the change (store/users.ts); null when no user acts (Scheme A, the CLI). */
export function actingAdminId({ config, principal }: Pick<OperationContext, "config" | "principal">): bigint | null {
  return config.auth === "users" && principal.user_id !== SYNTHETIC_ADMIN.user_id ? BigInt(principal.user_id) : null;
}

export function noLongerAdmin({ principal }: Pick<OperationContext, "principal">) {
  return forbidden(`${principal.username} is no longer an enabled admin: their access token's admin role was withdrawn, and users can be changed only by an admin`);
}
