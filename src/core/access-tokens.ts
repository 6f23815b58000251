// Access tokens of Scheme B (SPEC Authentication rule 4, CONTRACT §8): HS256 JWTs with sub, role,
// exp, iat and type "access", signed and checked with jose. Only HS256 is accepted: a token whose
// header names `none` or any other algorithm is refused before its signature is looked at.

import { createHash, randomBytes } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";

export type TokenRole = "admin" | "viewer";

export interface AccessClaims {
  /** The user's id (a snowflake, as a string). */
  sub: string;
  role: TokenRole;
  /** The username, so a request names its caller without reading the users table. */
  name: string;
}

const encoder = new TextEncoder();
/** CONTRACT §8: a secret shorter than this is refused at start. */
export const MIN_JWT_SECRET_BYTES = 32;

export async function signAccessToken(claims: AccessClaims, secret: string, nowMs: number, ttlS: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ role: claims.role, name: claims.name, type: "access" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(encoder.encode(secret));
}

/** A compact JWS as base64url without padding (RFC 7515): jose would also take `=` appended to the signature. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The claims of a valid access token at `nowMs`, or null (bad signature, algorithm, type, shape or expiry). */
export async function verifyAccessToken(token: string, secret: string, nowMs: number): Promise<AccessClaims | null> {
  if (!COMPACT_JWS.test(token)) return null;
  try {
    const { payload } = await jwtVerify(token, encoder.encode(secret), {
      algorithms: ["HS256"],
      currentDate: new Date(nowMs),
      // SPEC rule 4/7: sub, role, exp and type make an access token; iat and name are ours, optional.
      requiredClaims: ["sub", "exp"],
    });
    if (payload.type !== "access") return null;
    if (payload.role !== "admin" && payload.role !== "viewer") return null;
    if (typeof payload.sub !== "string" || !/^\d{1,19}$/.test(payload.sub)) return null;
    return { sub: payload.sub, role: payload.role, name: typeof payload.name === "string" ? payload.name : `user ${payload.sub}` };
  } catch {
    return null;
  }
}

/** A refresh token: 256 random bits, base64url. Only its sha256 is stored. */
export const newRefreshSecret = (): string => randomBytes(32).toString("base64url");

export const hashRefreshSecret = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex");
