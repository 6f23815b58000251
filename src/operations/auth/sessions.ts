// Scheme B sessions (SPEC Authentication rules 3-6, CONTRACT §8): login with throttling, refresh
// with rotation and reuse detection, logout. Nothing here ever puts a password, a token or a hash
// into a log line or an error.

import { hashRefreshSecret, newRefreshSecret, signAccessToken } from "../../core/access-tokens.js";
import type { Config } from "../../core/config.js";
import { invalid, tooManyRequests, unauthorized } from "../../core/errors.js";
import { decoyHash, fitsBcrypt, verifyPassword } from "../../core/passwords.js";
import { LOGIN_FAILURE_WINDOW_MS, clearLoginFailures, reserveLoginAttempt } from "../../store/login-failures.js";
import { consumeRefreshToken, findRefreshToken, insertRefreshToken, revokeChain } from "../../store/refresh-tokens.js";
import type { Store } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import { findUserByName, lockUser } from "../../store/users.js";
import type { ServiceContext } from "../context.js";

/** CONTRACT §8: 10 failed logins for one username within 15 minutes, then 429 until the window passes. */
export const LOGIN_FAILURE_LIMIT = 10;

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
  expires_in: number;
}

const REFUSED = "invalid username or password";

/** Scheme B's operations exist only where it is enforced (SERVICE_AUTH=users). */
export function requireUsersScheme(config: Config): string {
  if (config.auth !== "users" || !config.jwtSecret) {
    // SPEC Errors: Invalid is 422 with code `invalid`; the detail says why.
    throw invalid("user authentication is off on this server (SERVICE_AUTH=token): no login is needed or possible");
  }
  return config.jwtSecret;
}

export async function login(ctx: ServiceContext, username: string, password: string): Promise<TokenPair> {
  const secret = requireUsersScheme(ctx.config);
  const now = ctx.clock.now();
  // The attempt counts as a failure until its password matches (a success clears the count).
  await refuseWhileThrottled(ctx.db, ctx.ids.next(), username, now);
  const user = await findUserByName(ctx.db, username);
  // Every refusal costs one bcrypt comparison, so the time does not tell them apart.
  const whole = fitsBcrypt(password);
  const matches = await verifyPassword(whole ? password : "", user?.password_hash ?? (await decoyHash()));
  if (!user || !matches || !whole || user.disabled) throw unauthorized(REFUSED);
  await clearLoginFailures(ctx.db, username, now - LOGIN_FAILURE_WINDOW_MS);
  // Issued under the user's lock, as a refresh is, with the password and flag checked again: a
  // password change or a disable made while bcrypt ran must not be followed by a live session.
  const pair = await ctx.db.transaction().execute(async (tx) => {
    const current = await lockUser(tx, user.id);
    if (!current || current.disabled || current.password_hash !== user.password_hash) return null;
    return issuePair({ ...ctx, db: tx }, secret, current, "new", now);
  });
  if (!pair) throw unauthorized(REFUSED);
  return pair;
}

/** Records the attempt, or 429 when the window holds LIMIT failures already (a refused attempt is none). */
async function refuseWhileThrottled(db: Store, id: bigint, username: string, now: number): Promise<void> {
  const failures = await reserveLoginAttempt(db, { id, username, nowMs: now, sinceMs: now - LOGIN_FAILURE_WINDOW_MS, limit: LOGIN_FAILURE_LIMIT });
  if (failures === null) return;
  const retryAfterS = Math.max(1, Math.ceil((failures[0]! + LOGIN_FAILURE_WINDOW_MS - now) / 1000));
  throw tooManyRequests(`too many failed logins for this username: try again in ${retryAfterS} s`, retryAfterS);
}

/**
 * Consumes a live refresh token and issues a new pair in its chain, re-reading the user's role and
 * disabled flag. A token already consumed is reuse, the sign of a stolen token: its whole chain is
 * revoked. Of concurrent refreshes with one token exactly one is issued a pair, and the others are
 * reuse (CONTRACT §8). The user's row is locked first, as every revocation locks it (lockUser): a
 * password change, a disable or a logout either sees the token this issues or refuses this refresh.
 */
export async function refresh(ctx: ServiceContext, refreshToken: string): Promise<TokenPair> {
  const secret = requireUsersScheme(ctx.config);
  const now = ctx.clock.now();
  const tokenHash = hashRefreshSecret(refreshToken);
  const known = await findRefreshToken(ctx.db, tokenHash);
  const outcome = !known
    ? ({ kind: "refused" } as const)
    : await ctx.db.transaction().execute(async (tx) => {
        const user = await lockUser(tx, known.user_id);
        const consumed = await consumeRefreshToken(tx, tokenHash, now);
        if (!consumed) {
          const current = await findRefreshToken(tx, tokenHash);
          if (current?.rotated_at == null) return { kind: "refused" as const };
          return { kind: "reused" as const, revoked: await revokeChain(tx, current.chain_id, now) };
        }
        if (!user || user.disabled) {
          await revokeChain(tx, consumed.chain_id, now);
          return { kind: "refused" as const };
        }
        return { kind: "issued" as const, pair: await issuePair({ ...ctx, db: tx }, secret, user, consumed.chain_id, now) };
      });
  if (outcome.kind === "issued") return outcome.pair;
  if (outcome.kind === "reused") ctx.log.warn(`a used refresh token of user ${known!.user_id} was presented again: its login chain is revoked (${outcome.revoked} token(s))`);
  throw unauthorized("refresh token is not valid (unknown, expired, used or revoked): log in again");
}

/** Ends the login the token belongs to; says nothing about whether it existed (CONTRACT §6). */
export async function logout(ctx: ServiceContext, refreshToken: string): Promise<void> {
  requireUsersScheme(ctx.config);
  const known = await findRefreshToken(ctx.db, hashRefreshSecret(refreshToken));
  if (!known) return;
  // Under the user's lock (see refresh): a refresh in flight commits first, and its token is revoked too.
  await ctx.db.transaction().execute(async (tx) => {
    await lockUser(tx, known.user_id);
    await revokeChain(tx, known.chain_id, ctx.clock.now());
  });
}

/** A new access token and a refresh token in `chain` (a login starts one: its first token's id). */
async function issuePair(ctx: Pick<ServiceContext, "db" | "ids" | "config">, secret: string, user: UserRow, chain: bigint | "new", now: number): Promise<TokenPair> {
  const refreshToken = newRefreshSecret();
  const id = ctx.ids.next();
  await insertRefreshToken(ctx.db, {
    id,
    userId: user.id,
    tokenHash: hashRefreshSecret(refreshToken),
    chainId: chain === "new" ? id : chain,
    nowMs: now,
    expiresAtMs: now + ctx.config.jwtRefreshTtlS * 1000,
  });
  const ttl = ctx.config.jwtAccessTtlS;
  const accessToken = await signAccessToken({ sub: user.id.toString(), role: user.role as "admin" | "viewer", name: user.username }, secret, now, ttl);
  return { access_token: accessToken, refresh_token: refreshToken, token_type: "bearer", expires_in: ttl };
}
