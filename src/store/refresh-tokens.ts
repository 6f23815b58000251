// The refresh_tokens table (SPEC "Table refresh_tokens", CONTRACT §8): only sha256 hashes of the
// secrets are stored. A token is consumed by one guarded update, so of concurrent refreshes with
// one token exactly one wins; every token of a login shares its chain_id, so reuse of a consumed
// token can revoke what was issued after it.

import type { Store } from "./db.js";
import type { RefreshTokenRow } from "./schema.js";

export interface NewRefreshToken {
  id: bigint;
  userId: bigint;
  tokenHash: string;
  /** The login's first token id; a new login passes its own id. */
  chainId: bigint;
  nowMs: number;
  expiresAtMs: number;
}

export async function insertRefreshToken(db: Store, t: NewRefreshToken): Promise<void> {
  await db
    .insertInto("refresh_tokens")
    .values({ id: t.id, user_id: t.userId, token_hash: t.tokenHash, chain_id: t.chainId, created_at: t.nowMs, expires_at: t.expiresAtMs, rotated_at: null, revoked_at: null })
    .execute();
}

/** Marks a live token rotated; the row when this call consumed it, undefined when it was not live. */
export async function consumeRefreshToken(db: Store, tokenHash: string, nowMs: number): Promise<RefreshTokenRow | undefined> {
  return db
    .updateTable("refresh_tokens")
    .set({ rotated_at: nowMs })
    .where("token_hash", "=", tokenHash)
    .where("rotated_at", "is", null)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", BigInt(nowMs))
    .returningAll()
    .executeTakeFirst();
}

export async function findRefreshToken(db: Store, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
}

/** Revokes every token of a chain not yet revoked; how many. */
export async function revokeChain(db: Store, chainId: bigint, nowMs: number): Promise<number> {
  const result = await db.updateTable("refresh_tokens").set({ revoked_at: nowMs }).where("chain_id", "=", chainId).where("revoked_at", "is", null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Revokes every token of a user (disabled, demoted or given a new password). */
export async function revokeUserTokens(db: Store, userId: bigint, nowMs: number): Promise<number> {
  const result = await db.updateTable("refresh_tokens").set({ revoked_at: nowMs }).where("user_id", "=", userId).where("revoked_at", "is", null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}
