// Checks every request passes before any route sees it: the path is written the one way our routes
// are (so no other spelling reaches a handler), the Host names this server (DNS rebinding), and a
// browser's mutating request comes from this server's own pages (cross-site requests).

import { forbidden, notFound } from "../../core/errors.js";

/**
 * Percent-escapes that spell a character the path could carry as itself, or that the router would
 * read as structure: unreserved characters (A-Z a-z 0-9 - . _ ~), the separators / and \, and the
 * percent sign (double encoding). `/%61pi/v0/jobs` is `/api/v0/jobs` to the router, not to a reader.
 * (`;` is no delimiter to our router: it stays part of the segment and names nothing else.)
 */
const ALTERNATIVE_SPELLING = /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[def]|5[cf]|7e)/i;
const ENCODED_PERCENT = /%25/i;

/** A path with none of these is canonical: one test answers the common case (every request pays it). */
const SUSPECT = /[%\\#]|\/\/|\/\.|^(?!\/)/;

/** Why a request path is not canonical, or null when it is. */
export function nonCanonicalPath(url: string): string | null {
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  if (!SUSPECT.test(path)) return null;
  if (!path.startsWith("/")) return "the path must start with /";
  if (path.includes("//")) return "the path has an empty segment (//)";
  if (path.includes("\\")) return "the path has a backslash";
  if (path.includes("#")) return "the path has a fragment";
  if (path.split("/").some((segment) => segment === "." || segment === "..")) return "the path has a dot segment";
  if (/%(?:2f|5c)/i.test(path)) return "the path encodes a separator (%2F or %5C) inside a segment: no name or id of ours holds one";
  if (ALTERNATIVE_SPELLING.test(path)) return "the path percent-encodes a character that needs no encoding";
  if (ENCODED_PERCENT.test(path)) return "the path encodes a percent sign (%25: double encoding)";
  return null;
}

/** Refuses a request whose path is not written canonically: it names no route of ours. */
export function checkCanonicalPath(method: string, url: string): void {
  const why = nonCanonicalPath(url);
  if (why) throw notFound(`no route ${method} ${url.split("?", 1)[0]!.slice(0, 200)}: ${why}`);
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1 (RFC 6761: these never leave the machine). */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return LOOPBACK_NAMES.has(name) || name.endsWith(".localhost") || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** The host part of a Host header (`name`, `name:port`, `[v6]:port`), lowercased. */
export function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1);
  return value.replace(/:\d*$/, "");
}

export interface HostPolicy {
  /** Only loopback names plus `allowed` are answered (a server bound to a loopback address). */
  loopbackOnly: boolean;
  /** SERVICE_ALLOWED_HOSTS: host names answered besides loopback ones (always enforced when set). */
  allowed: readonly string[];
}

/** Refuses a Host that does not name this server (DNS rebinding: a page served from another name). */
export function checkHost(policy: HostPolicy, hostHeader: string | undefined): void {
  if (!policy.loopbackOnly && policy.allowed.length === 0) return;
  const name = hostHeader ? hostnameOf(hostHeader) : "";
  if (name !== "" && (isLoopbackName(name) || policy.allowed.includes(name))) return;
  const shown = (hostHeader ?? "").slice(0, 100);
  throw forbidden(`Host "${shown}" is not a name of this server; add it to SERVICE_ALLOWED_HOSTS to allow it`);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A browser sends `Origin` with cross-site requests; a mutating request is refused unless the
 * origin is this server itself (the same host and port the request was sent to).
 */
/**
 * The scheme the browser used: a TLS-terminating proxy in front (docs/SECURITY.md allows one)
 * forwards plain HTTP and says `X-Forwarded-Proto: https`; the page's Origin is https, and every
 * sign-in and change from the web app was refused. Trusting the header here opens nothing: a page
 * of another origin cannot add it to a request without a CORS preflight, which this server never
 * grants, and the Origin's host must still be this server's.
 */
export function servedProtocol(protocol: string, forwarded: string | string[] | undefined): string {
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",", 1)[0]?.trim().toLowerCase();
  return first === "https" || first === "http" ? first : protocol;
}

export function checkOrigin(method: string, originHeader: string | undefined, hostHeader: string | undefined, protocol: string): void {
  if (SAFE_METHODS.has(method) || originHeader === undefined) return;
  let origin: URL | null = null;
  try {
    origin = new URL(originHeader);
  } catch {
    origin = null;
  }
  const own = hostHeader === undefined ? null : normalizedHost(hostHeader, protocol);
  if (origin !== null && own !== null && origin.protocol === `${protocol}:` && origin.host.toLowerCase() === own) return;
  throw forbidden(`a ${method} from origin "${originHeader.slice(0, 100)}" is refused: only this server's own pages may change things`);
}

/** The Host header as URL.host writes it (the scheme's default port dropped). */
function normalizedHost(hostHeader: string, protocol: string): string | null {
  try {
    return new URL(`${protocol}://${hostHeader.trim()}`).host.toLowerCase();
  } catch {
    return null;
  }
}
