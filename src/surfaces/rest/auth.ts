// Authentication at the HTTP boundary. Scheme A (static shared token, SPEC "Authentication"):
// SERVICE_API_TOKEN is read on every request; when set, a route whose operation is not `public`
// (and the MCP mount) needs the bearer token. The check is a hook on those routes themselves, so
// no spelling of a path can reach one without it.

import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { readApiToken } from "../../core/config.js";
import { unauthorized } from "../../core/errors.js";
import { type Principal, SYNTHETIC_ADMIN } from "../../operations/index.js";

/** Timing-safe: compare fixed-length digests so neither content nor length leaks. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The header the CLI sends its own local server, carrying the secret from server.json. */
export const LOCAL_SECRET_HEADER = "x-jobhouse-local";

/** Resolves the caller of a guarded request, or throws `unauthorized`. */
export function resolvePrincipal(request: FastifyRequest, localSecret?: string): Principal {
  const local = request.headers[LOCAL_SECRET_HEADER];
  // The CLI of this machine's user: the same trust as running the operation in-process.
  if (localSecret && typeof local === "string" && sameSecret(local, localSecret)) return SYNTHETIC_ADMIN;
  const token = readApiToken();
  if (token === null) return SYNTHETIC_ADMIN;
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  if (!match) throw unauthorized("missing bearer token: send Authorization: Bearer <token>");
  if (!sameSecret(match[1]!, token)) throw unauthorized("invalid bearer token");
  return SYNTHETIC_ADMIN;
}
