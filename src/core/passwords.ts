// Password hashing for Scheme B (CONTRACT §8): bcrypt at cost 12 through a native library whose
// hash and compare run on libuv's pool, so a flood of logins never holds the event loop.

import { hash, verify } from "@node-rs/bcrypt";
import { invalid } from "./errors.js";

export const BCRYPT_COST = 12;
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt reads at most 72 bytes: a longer password would be silently cut, so it is refused. */
export const MAX_PASSWORD_BYTES = 72;

/** Refuses (422) a password bcrypt could not honour in full, or one too short to be one. */
export function checkPasswordRules(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw invalid(`password: at least ${MIN_PASSWORD_LENGTH} characters`);
  if (Buffer.byteLength(password, "utf8") > MAX_PASSWORD_BYTES) {
    throw invalid(`password: at most ${MAX_PASSWORD_BYTES} bytes in UTF-8 (bcrypt ignores the rest, so a longer one is refused rather than cut)`);
  }
  if (password.includes("\0")) throw invalid("password: must not contain a NUL character");
}

export function hashPassword(password: string, cost = BCRYPT_COST): Promise<string> {
  return hash(password, { cost, rejectLongPasswords: true });
}

/** False for a malformed hash as for a wrong password: the caller answers both alike. */
export async function verifyPassword(password: string, passwordHash: string): Promise<boolean> {
  try {
    return await verify(password, passwordHash);
  } catch {
    return false;
  }
}

let decoy: Promise<string> | undefined;

/**
 * A hash of nothing anyone knows, at the same cost: a login for an unknown user compares against
 * it, so answering "no such user" takes as long as "wrong password".
 */
export function decoyHash(cost = BCRYPT_COST): Promise<string> {
  return (decoy ??= hashPassword(`decoy-${Math.random()}-${Date.now()}`, cost));
}
