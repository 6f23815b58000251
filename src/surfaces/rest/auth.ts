// Authentication at the HTTP boundary (SPEC "Authentication"). Scheme A (SERVICE_AUTH=token):
// SERVICE_API_TOKEN is read on every request; when set, a route whose operation is not `public`
// (and the MCP mount) needs it as the bearer token. Scheme B (SERVICE_AUTH=users): the bearer is
// an HS256 access token whose sub, name and role are trusted until it expires (rule 7). The check
// is a hook on those routes themselves, so no spelling of a path can reach one without it.

import { hash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { verifyAccessToken } from "../../core/access-tokens.js";
import { readApiToken } from "../../core/config.js";
import { unauthorized } from "../../core/errors.js";
import { type Principal, type ServiceContext, SYNTHETIC_ADMIN } from "../../operations/index.js";

// The one-shot digest: a third cheaper than a Hash object, and it runs on every request.
const sha256 = (text: string): Buffer => hash("sha256", text, "buffer");

/** Digests of the expected secrets (the API token, the local secret): worked out once, not per request. */
const expectedDigests = new Map<string, Buffer>();

/** Timing-safe: compare fixed-length digests so neither content nor length leaks. */
function sameSecret(given: string, expected: string): boolean {
  let digest = expectedDigests.get(expected);
  if (!digest) {
    // The token is read per request and may change; old ones are not kept.
    if (expectedDigests.size >= 4) expectedDigests.clear();
    digest = sha256(expected);
    expectedDigests.set(expected, digest);
  }
  return timingSafeEqual(sha256(given), digest);
}

/** The header the CLI sends its own local server, carrying the secret from server.json. */
export const LOCAL_SECRET_HEADER = "x-jobhouse-local";

/** The bearer credential of a request, or throws `unauthorized` (401 with WWW-Authenticate: Bearer). */
function bearerOf(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null;
  if (!match) throw unauthorized("missing bearer token: send Authorization: Bearer <token>");
  return match[1]!;
}

/** Resolves the caller of a guarded request, or throws `unauthorized`. */
export async function resolvePrincipal(request: FastifyRequest, service: Pick<ServiceContext, "config" | "clock">, localSecret?: string): Promise<Principal> {
  const local = request.headers[LOCAL_SECRET_HEADER];
  // The CLI of this machine's user: the same trust as running the operation in-process.
  if (localSecret && typeof local === "string" && sameSecret(local, localSecret)) return SYNTHETIC_ADMIN;
  if (service.config.auth === "users") return userPrincipal(bearerOf(request), service);
  const token = readApiToken();
  if (token === null) return SYNTHETIC_ADMIN;
  if (!sameSecret(bearerOf(request), token)) throw unauthorized("invalid bearer token");
  return SYNTHETIC_ADMIN;
}

async function userPrincipal(token: string, { config, clock }: Pick<ServiceContext, "config" | "clock">): Promise<Principal> {
  // Server start refuses Scheme B without a secret; this only guards a service built otherwise.
  if (!config.jwtSecret) throw unauthorized("user authentication is not configured on this server");
  const claims = await verifyAccessToken(token, config.jwtSecret, clock.now());
  if (!claims) throw unauthorized("invalid or expired access token: log in again or refresh it");
  return { user_id: claims.sub, username: claims.name, role: claims.role };
}
