// The HTTP application: REST routes from the registry, the event stream, Problem mapping, OpenAPI
// and docs, the MCP mount, the request guards and authentication, and the web app with its
// index.html fallback.

import { isUtf8 } from "node:buffer";
import { existsSync } from "node:fs";
import { join, sep } from "node:path";
import type { Duplex } from "node:stream";
import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { forbidden, invalid, isServiceError, notFound } from "../../core/errors.js";
import { firstLossyNumber, lossyNumberMessage } from "../../core/json-integers.js";
import { PROTOTYPE_KEY_MESSAGE } from "../../core/prototype-keys.js";
import type { AnyOperation, OperationContext, Principal, ServiceContext } from "../../operations/index.js";
import { createMcpEndpoint } from "../mcp/server.js";
import { resolvePrincipal } from "./auth.js";
import { registerDocs } from "./docs.js";
import { EVENTS_PATH, EVENTS_PATH_ITEM, type EventStreamLimits, registerEventStream } from "./events.js";
import { buildOpenApiDocument, problemResponse } from "./openapi.js";
import { charsetRefusal, contentEncodingRefusal, notUtf8Refusal, problemFor, routerProblem, sendProblem } from "./problems.js";
import { type RouteMethods, collectRouteMethods } from "./route-methods.js";
import { createRefusalLog } from "./refusals.js";
import { type HostPolicy, checkCanonicalPath, checkHost, checkOrigin, isLoopbackName, servedProtocol } from "./request-guards.js";
import { MAX_PATH_PARAM_LENGTH, registerOperationRoutes } from "./routes.js";

export interface RestAppOptions {
  /** Directory of the web app (index.html and its assets). */
  webRoot: string;
  /** The local server's secret for its own CLI (see app/server-file.ts). */
  localSecret?: string;
  /** The address the server listens on; a loopback one answers loopback Host names only. */
  listenHost?: string;
  /** SERVICE_ALLOWED_HOSTS: Host names answered besides loopback ones. */
  allowedHosts?: readonly string[];
  /** Serve HTTPS with this certificate and key (`server start --tls-cert --tls-key`). */
  tls?: { cert: Buffer; key: Buffer };
  /** The event stream's keep-alive, buffer and log-poll bounds (defaults: CONTRACT §10). */
  eventLimits?: EventStreamLimits;
  /** Serve GET /metrics from this, and count every request in it (app/metrics.ts). */
  metrics?: MetricsEndpoint;
}

/** What the HTTP app needs of the metrics: the page to serve, and a place to count each request. */
export interface MetricsEndpoint {
  readonly contentType: string;
  render(): Promise<string>;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  close(): void;
}

const ANONYMOUS: Principal = Object.freeze({ user_id: "", username: "anonymous", role: "viewer" });

declare module "fastify" {
  interface FastifyRequest {
    operationContext?: OperationContext;
    /** Why /mcp must not run what this body asks (a number JSON would change, a prototype key). */
    bodyRefusal?: string;
  }
}

export async function buildHttpApp(
  service: ServiceContext,
  operations: readonly AnyOperation[],
  options: RestAppOptions,
): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.tls ? { https: options.tls } : {}),
    logger: false,
    bodyLimit: 10 * 1024 * 1024,
    forceCloseConnections: true,
    // One spelling per route: `/API/v0/jobs`, `/api/v0/jobs/` and `//api/v0/jobs` name nothing (and
    // `;` is no delimiter, fastify 5's default: it stays part of its segment).
    routerOptions: {
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      maxParamLength: MAX_PATH_PARAM_LENGTH,
    },
    // The router's own refusals are Problems like every other error.
    frameworkErrors: (error, _request, reply) => sendProblem(reply, routerProblem(error, service.log)),
    // So are Node's, for a request it cannot parse at all (headers too large, malformed HTTP).
    clientErrorHandler: writeClientErrorProblem,
  });
  const routeMethods = collectRouteMethods(app);
  // An empty body sent as JSON is no body (clients set the header on every request, cancel and
  // enable included, which take none): routes that need fields still refuse it as 422 invalid.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  // Every body we take is JSON: text/plain was read as a string, then refused as "not a JSON
  // object" (422) where any other type is 415 saying what to send.
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const encoding = request.headers["content-encoding"];
    // Compressed, it would be read as text all the same (a gzip body with a JSON header was).
    if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity") return done(contentEncodingRefusal(encoding), undefined);
    // A body with no bytes has no charset to get wrong (a cancel sent with a header naming one).
    const charset = body.length === 0 ? undefined : declaredCharset(request.headers["content-type"]);
    if (charset !== undefined && !UTF8_CHARSETS.has(charset)) return done(charsetRefusal(charset), undefined);
    if (typeof body !== "string" && !isUtf8(body)) return done(notUtf8Refusal(), undefined);
    const text = body.toString("utf8");
    if (text.trim() === "") return done(null, undefined);
    const mcp = request.url.startsWith("/mcp");
    const lossy = firstLossyNumber(text);
    // REST refuses such a body here; /mcp answers it in JSON-RPC's terms, a tool call with the
    // Problem REST would have given (the body is parsed for its ids only, never run).
    if (lossy !== null && !mcp) return done(invalid(lossyNumberMessage(lossy)), undefined);
    parseJson(request, text, (error, parsed) => {
      // fastify words every refusal "Body is not valid JSON", also valid JSON it refuses for a key
      // that could reach an object's prototype: that one is named. Parsed plainly, such a body is
      // the value /mcp reads its requests' ids from.
      const poisoned = error !== null && (error as { code?: string }).code === "FST_ERR_CTP_INVALID_JSON_BODY" ? plainJson(text) : undefined;
      if (poisoned !== undefined && !mcp) return done(invalid(`request body: ${PROTOTYPE_KEY_MESSAGE}`), undefined);
      // Only a body that is JSON: one that is not is a parse error (-32700) whatever it holds.
      if (mcp && (poisoned !== undefined || (lossy !== null && error === null))) {
        request.bodyRefusal = poisoned !== undefined ? `request body: ${PROTOTYPE_KEY_MESSAGE}` : lossyNumberMessage(lossy!);
        return done(null, poisoned !== undefined ? poisoned.value : parsed);
      }
      done(error, parsed);
    });
  });
  const hosts: HostPolicy = { loopbackOnly: isLoopbackName(options.listenHost ?? "127.0.0.1"), allowed: options.allowedHosts ?? [] };

  const refusals = createRefusalLog(service.log);
  app.addHook("onClose", async () => refusals.close());
  app.setErrorHandler((error, request, reply) => {
    // A body that is not JSON, sent to /mcp, is a JSON-RPC parse error there, not a REST Problem.
    const toMcp = request.url.split("?", 1)[0] === "/mcp";
    if (toMcp && isBodyParseError(error)) {
      return reply.code(400).type("application/json").send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `Parse error: ${(error as Error).message}` } });
    }
    const problem = problemFor(error, service.log);
    // A body /mcp cannot take (its type, encoding or size) is answered as the MCP server itself
    // answers one: a JSON-RPC error with the HTTP status (it was a REST Problem).
    if (toMcp && (problem.status === 413 || problem.status === 415)) {
      return reply.code(problem.status).type("application/json").send({ jsonrpc: "2.0", id: null, error: { code: -32000, message: `${problem.title}: ${problem.detail}` } });
    }
    // A store that does not answer (or /ready saying so) is the operator's to see, once a minute: a
    // load balancer's probes or every request of an outage would otherwise fill the log.
    const outage = problem.code === "store_unavailable" || problem.code === "not_ready";
    if (problem.status < 500 || outage) refusals.note(problem.status, problem.code, request.method, routeLabel(request), outage ? problem.detail : undefined);
    // Another 5xx the service chose is the operator's to see, as every other 5xx is (a defect's
    // 500 was logged with its stack by problemFor).
    else if (isServiceError(error)) service.log.error(`${request.method} ${request.routeOptions.url ? routeLabel(request) : request.url}: ${problem.status} ${problem.code}: ${problem.detail}`, { status: problem.status, code: problem.code });
    return sendProblem(reply, problem);
  });

  // Before any route (or the not-found handler) runs: the path's spelling, the Host, the Origin.
  // Callback style: these checks are synchronous, and an async hook costs a promise per request.
  app.addHook("onRequest", (request, _reply, done) => {
    try {
      checkCanonicalPath(request.method, request.url);
      checkHost(hosts, request.headers.host);
      checkOrigin(request.method, request.headers.origin, request.headers.host, servedProtocol(request.protocol, request.headers["x-forwarded-proto"]));
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });

  const contextOf = operationContexts(service);
  // Attached to each route that needs a caller (SPEC Scheme A rule 5): the route decides, not its path.
  const authenticate = async (request: FastifyRequest) => {
    request.operationContext = contextOf(await resolvePrincipal(request, service, options.localSecret));
  };
  // Public routes (GET /health) run as an anonymous viewer, so none of them can mutate anything.
  const contextFor = (request: FastifyRequest): OperationContext => request.operationContext ?? contextOf(ANONYMOUS);

  if (options.metrics) registerMetrics(app, options.metrics);
  registerOperationRoutes(app, operations, authenticate, contextFor);
  registerEventStream(app, service, authenticate, options.eventLimits);
  await registerDocs(app, buildOpenApiDocument(operations, service.version, { [EVENTS_PATH]: EVENTS_PATH_ITEM, ...(options.metrics ? { "/metrics": METRICS_PATH_ITEM } : {}) }));

  const mcp = createMcpEndpoint(operations, service.version, service.log);
  // SPEC Scheme B rule 10: the MCP surface is admin only and all-or-nothing, decided at the mount.
  const requireAdmin = async (request: FastifyRequest) => {
    const principal = request.operationContext?.principal;
    if (principal?.role !== "admin") throw forbidden(`/mcp needs the admin role; ${principal?.username ?? "the caller"} is ${principal?.role ?? "unknown"}`);
  };
  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    // GET and DELETE reach the handler only to be refused (no idle event stream, no session to
    // end: the endpoint is stateless): it answers POST.
    config: { allow: ["POST"] },
    onRequest: [authenticate, requireAdmin],
    handler: async (request, reply) => {
      reply.hijack();
      await mcp.handle(request.raw, reply.raw, request.body, contextFor(request), request.bodyRefusal);
    },
  });

  await registerWebApp(app, options.webRoot, service, routeMethods, authenticate);
  return app;
}

/** The text's value by JSON.parse, without fastify's prototype check; undefined when it is no JSON. */
function plainJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** Fastify's refusal of a request body it could not read as JSON. */
/** Charsets whose bytes UTF-8 reads as they are meant (ASCII is a subset of it). */
const UTF8_CHARSETS = new Set(["utf-8", "utf8", "us-ascii", "ascii"]);

/** The charset parameter of a Content-Type, lower-cased and unquoted; undefined when it names none (or an empty one). */
function declaredCharset(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? "");
  return match && match[2] !== "" ? match[2]!.toLowerCase() : undefined;
}

function isBodyParseError(error: unknown): boolean {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  return statusCode === 400 && (code === "FST_ERR_CTP_INVALID_JSON_BODY" || code === "FST_ERR_CTP_EMPTY_JSON_BODY" || error instanceof SyntaxError);
}

/**
 * The operation context of each caller, made once and shared by its requests (read-only, frozen).
 * Copying the service into a new context per request cost microseconds: V8 (Node 20) builds an
 * object literal that spreads one object and adds a field through a slow path.
 */
function operationContexts(service: ServiceContext): (principal: Principal) => OperationContext {
  const contexts = new Map<string, OperationContext>();
  return (principal) => {
    const key = `${principal.role}\0${principal.user_id}\0${principal.username}`;
    let context = contexts.get(key);
    if (context === undefined) {
      // Bounded: Scheme B callers are as many as the users; a flood of them only rebuilds.
      if (contexts.size >= 1024) contexts.clear();
      context = Object.freeze({ ...service, principal: Object.freeze({ ...principal }) });
      contexts.set(key, context);
    }
    return context;
  };
}

/**
 * A request Node's HTTP parser refused before any route saw it (CONTRACT §2: every error is a
 * Problem): 431 for headers over the limit (an oversized bearer token, say), 408 for a request that
 * did not arrive in time, 400 for anything else. The connection is closed after the answer.
 */
export function writeClientErrorProblem(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, title, detail, code] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large", "the request's headers exceed the server's limit", "headers_too_large"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "the request did not arrive in time", "request_timeout"]
        : [400, "Bad Request", "the request is not valid HTTP", "bad_request"];
  const body = JSON.stringify({ title, status, detail, code });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

/** GET /metrics in the OpenAPI document: a route of the server like /health, though no operation. */
const METRICS_PATH_ITEM = {
  get: {
    operationId: "metrics",
    summary: "Prometheus metrics",
    description: "Counts, durations and process figures in the Prometheus text format (docs/OPERATIONS.md); never names, ids or data. Public: no credentials.",
    tags: ["metrics"],
    security: [],
    responses: {
      "200": { description: "The metrics, Prometheus text exposition format 0.0.4", content: { "text/plain": { schema: { type: "string" } } } },
      "400": problemResponse("The request URL could not be read (code bad_url)"),
    },
  },
};

/**
 * GET /metrics for Prometheus, open like /health: counts, durations and process figures only (no
 * names, ids or data); keep it on an internal network (docs/OPERATIONS.md). Every answer is timed
 * under its route's pattern, so ids in paths do not multiply the series.
 */
function registerMetrics(app: FastifyInstance, metrics: MetricsEndpoint): void {
  app.addHook("onResponse", async (request, reply) => {
    const route = routeLabel(request);
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.get("/metrics", async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()));
  app.addHook("onClose", async () => metrics.close());
}

/** The app's own origin only: no script, style, font or request may come from or go anywhere else. */
const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // React Flow positions nodes with style attributes.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/**
 * The route a request matched, as the API documents it: the router writes a literal colon doubled
 * (`/api/v0/jobs::run`), which dashboards and alerts written against `/api/v0/jobs:run` missed.
 */
const routeLabel = (request: FastifyRequest) => request.routeOptions.url?.replaceAll("::", ":") ?? "unmatched";

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>jobhouse</title>
<h1>The web app is not built</h1><p>Run <code>npm run build:web</code> (npm install does it), then restart the server: it serves the web app that was built when it started.
The REST API (<a href="/api/v0/docs">/api/v0/docs</a>) and MCP (<code>/mcp</code>) work without it.</p>`;

/** Paths under the guarded prefixes that SPEC keeps open (Scheme A rule 6), with their assets. */
const OPEN_DOCUMENTS = ["/api/v0/openapi.json", "/api/v0/docs", "/api/v0/redoc"];

/** SPEC Scheme A rule 3: every request to /api/v0/* and /mcp/* carries the token, routed or not. */
function isGuardedPath(path: string): boolean {
  const under = (prefix: string) => path === prefix || path.startsWith(prefix + "/");
  return (under("/api/v0") || under("/mcp")) && !OPEN_DOCUMENTS.some(under);
}

async function registerWebApp(
  app: FastifyInstance,
  webRoot: string,
  service: ServiceContext,
  routeMethods: RouteMethods,
  authenticate: (request: FastifyRequest) => Promise<void>,
): Promise<void> {
  const built = existsSync(join(webRoot, "index.html"));
  if (built) {
    await app.register(fastifyStatic, {
      root: webRoot,
      prefix: "/",
      index: false,
      wildcard: false,
      // Vite names assets by content hash: they never change under one name.
      setHeaders: (res, path) => {
        if (path.includes(`${sep}assets${sep}`)) res.header("cache-control", "public, max-age=31536000, immutable");
      },
    });
  }
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?", 1)[0]!;
    const lower = path.toLowerCase();
    // Anything that might be taken for the API or MCP answers as the API would, never with a page.
    // The first segment is `api` or `mcp`, however spelled after it (`;x=1`, `%20`, `.`); a longer
    // name (`/apix`, `/api-docs`) is a page's.
    const isApi = /^\/(api|mcp)(?![a-z0-9_-])/.test(lower);
    const isPage = !isApi && (request.method === "GET" || request.method === "HEAD") && !lower.startsWith("/assets/");
    if (isPage && !built) return reply.code(503).type("text/html").send(NOT_BUILT_PAGE);
    // SPEC: unknown non-API routes fall back to the application's index.html (a deep link reloads).
    if (isPage) {
      return reply.header("content-security-policy", WEB_APP_CSP).type("text/html").sendFile("index.html");
    }
    // An unknown path under the API answers 401 before 404 or 405: without the token a caller
    // learns nothing, not even which paths exist.
    if (isGuardedPath(path)) await authenticate(request);
    // The path exists, under other methods: 405 with what it does answer to.
    const allowed = routeMethods.allowedAt(path);
    if (allowed.length > 0) {
      reply.header("Allow", allowed.join(", "));
      return sendProblem(reply, { title: "Method Not Allowed", status: 405, detail: `${path.slice(0, 200)} answers ${allowed.join(", ")}, not ${request.method}`, code: "method_not_allowed" });
    }
    return sendProblem(reply, problemFor(notFound(`no route ${request.method} ${path.slice(0, 200)}`), service.log));
  });
}
