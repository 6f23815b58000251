// Scheme B wire models (SPEC "Authentication models", CONTRACT §6 and §8).

import { z } from "zod";
import { Cursor, IdString, Limit, Page, Timestamp } from "./common.js";
import { Role } from "./system.js";

/**
 * Letters, digits and . _ @ -; not all digits (a ref that is all digits means an id), and not `.`
 * or `..`, which no URL can carry as a segment: `/users/../disable` is a dot segment, refused.
 */
export const Username = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._@-]+$/, "letters, digits and . _ @ - only")
  // Patterns rather than refinements, so the published schema refuses what the server refuses.
  .regex(/^(?!\d+$)/, "must not be all digits (an all-digit ref names a user id)")
  .regex(/^(?!\.\.?$)/, "must not be . or .. (no URL path can name it)")
  .describe("Login name: 1-64 letters, digits, '.', '_', '@' or '-', not all digits, not . or ..");

/** Checked in full by the handler (length, bcrypt's 72 bytes); bounded here so no huge value is hashed. */
export const Password = z.string().max(1024).describe("At least 8 characters and at most 72 bytes in UTF-8");

export const LoginRequest = z.object({ username: z.string().max(200), password: Password });
// Long enough for any token a client may send in its place (an access token is refused as a
// refresh token with 401, as any other unknown one; it was 422 at 200 characters).
const PresentedToken = z.string().max(8192);
export const RefreshRequest = z.object({ refresh_token: PresentedToken });
export const LogoutRequest = z.object({ refresh_token: PresentedToken.describe("The refresh token to revoke") });

export const TokenPair = z.object({
  access_token: z.string(),
  refresh_token: z.string().describe("Opaque; send it to /auth/refresh for a new pair (it is then used up)"),
  token_type: z.literal("bearer"),
  expires_in: z.number().int().positive().describe("Lifetime of the access token in seconds"),
});
export type TokenPair = z.infer<typeof TokenPair>;

export const UserView = z.object({
  id: IdString,
  username: z.string(),
  role: Role,
  disabled: z.boolean(),
  created_at: Timestamp,
});
export type UserView = z.infer<typeof UserView>;

export const CreateUserRequest = z.object({ username: Username, password: Password, role: Role });
export const UserRef = z
  .string()
  .min(1)
  .max(200)
  // As RefId: an all-digit ref is an id, written one way.
  .refine((text) => !/^0\d+$/.test(text), "an id is written without leading zeros")
  .describe("A user id or a username");
export const UserRefInput = z.object({ ref: UserRef });
export const SetRoleRequest = z.object({ ref: UserRef, role: Role });
export const SetPasswordRequest = z.object({ ref: UserRef, password: Password });
export const UserFilter = z.object({ limit: Limit, cursor: Cursor.optional() });

/** A page of UserView (list responses are named for generated clients). */
export const UserPage = Page(UserView);
