// Password hashing for Scheme B (CONTRACT §8): bcrypt at cost 12 through a native library whose
// hash and compare run on libuv's pool, never on the event loop. That pool (4 threads, first come
// first served) also runs the access-token check of every other request (WebCrypto's HMAC): with
// a login flood queued in it, each of those waited behind every queued bcrypt (GET /jobs fell from
// 1,500/s to 6/s, p99 2.9 s, in bench/auth.ts). So bcrypt enters the pool at most MAX_RUNNING at a
// time, in arrival order, and beyond MAX_WAITING queued a login is refused with 503 and Retry-After.

import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/bcrypt";
import { invalid, unavailable } from "./errors.js";

export const BCRYPT_COST = 12;
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt reads at most 72 bytes: a longer password would be silently cut, so it is refused. */
export const MAX_PASSWORD_BYTES = 72;

/** Whether bcrypt reads all of the password. */
export const fitsBcrypt = (password: string): boolean => Buffer.byteLength(password, "utf8") <= MAX_PASSWORD_BYTES;

/** Refuses (422) a password bcrypt could not honour in full, or one too short to be one. */
export function checkPasswordRules(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw invalid(`password: at least ${MIN_PASSWORD_LENGTH} characters`);
  if (!fitsBcrypt(password)) {
    throw invalid(`password: at most ${MAX_PASSWORD_BYTES} bytes in UTF-8 (bcrypt ignores the rest, so a longer one is refused rather than cut)`);
  }
  if (password.includes("\0")) throw invalid("password: must not contain a NUL character");
}

/** One fewer than the cores (one at least), and never the whole of libuv's pool of 4. */
const MAX_RUNNING = Math.min(3, Math.max(1, availableParallelism() - 1));
const MAX_WAITING = 256;
let running = 0;
const waiting: (() => void)[] = [];

/** Runs bcrypt work within MAX_RUNNING at a time, in arrival order. */
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running < MAX_RUNNING) running += 1;
  else {
    if (waiting.length >= MAX_WAITING) throw unavailable("too many password checks are waiting: try again in a second", "busy", 1);
    // The slot is handed over by the one finishing (running stays counted).
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** bcrypt work queued or running now (a benchmark waits for none before closing its stores). */
export const passwordWorkPending = (): number => running + waiting.length;

export function hashPassword(password: string, cost = BCRYPT_COST): Promise<string> {
  return limited(() => hash(password, { cost, rejectLongPasswords: true }));
}

/** False for a malformed hash as for a wrong password: the caller answers both alike. */
export function verifyPassword(password: string, passwordHash: string): Promise<boolean> {
  return limited(async () => {
    try {
      return await verify(password, passwordHash);
    } catch {
      return false;
    }
  });
}

let decoy: Promise<string> | undefined;

/**
 * A hash of nothing anyone knows, at the same cost: a login for an unknown user compares against
 * it, so answering "no such user" takes as long as "wrong password".
 */
export function decoyHash(cost = BCRYPT_COST): Promise<string> {
  return (decoy ??= hashPassword(`decoy-${Math.random()}-${Date.now()}`, cost));
}
