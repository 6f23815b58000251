// The HTTP application: REST routes from the registry, Problem mapping, OpenAPI and docs, the MCP
// mount, authentication at the boundary, and the web app with its index.html fallback.

import { existsSync } from "node:fs";
import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { notFound } from "../../core/errors.js";
import type { AnyOperation, OperationContext, Principal, ServiceContext } from "../../operations/index.js";
import { createMcpEndpoint } from "../mcp/server.js";
import { isGuardedPath, resolvePrincipal } from "./auth.js";
import { registerDocs } from "./docs.js";
import { buildOpenApiDocument } from "./openapi.js";
import { problemFor, sendProblem } from "./problems.js";
import { registerOperationRoutes } from "./routes.js";

export interface RestAppOptions {
  /** Directory of the web app (index.html and its assets). */
  webRoot: string;
  /** The local server's secret for its own CLI (see app/server-file.ts). */
  localSecret?: string;
}

const ANONYMOUS: Principal = Object.freeze({ user_id: "", username: "anonymous", role: "viewer" });

declare module "fastify" {
  interface FastifyRequest {
    operationContext?: OperationContext;
  }
}

export async function buildHttpApp(
  service: ServiceContext,
  operations: readonly AnyOperation[],
  options: RestAppOptions,
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024, forceCloseConnections: true });
  // Guarded paths carry the principal the onRequest hook resolved; open ones (GET /health) run
  // as an anonymous viewer, so no open route can mutate anything.
  const contextFor = (request: FastifyRequest): OperationContext => request.operationContext ?? { ...service, principal: ANONYMOUS };

  app.setErrorHandler((error, _request, reply) => sendProblem(reply, problemFor(error, service.log)));

  // One check for every router and the MCP mount (SPEC Scheme A rule 5).
  app.addHook("onRequest", async (request) => {
    if (isGuardedPath(request.url)) request.operationContext = { ...service, principal: resolvePrincipal(request, options.localSecret) };
  });

  registerOperationRoutes(app, operations, contextFor);
  await registerDocs(app, buildOpenApiDocument(operations, service.version));

  const mcp = createMcpEndpoint(operations, service.version, service.log);
  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    handler: async (request, reply) => {
      reply.hijack();
      await mcp.handle(request.raw, reply.raw, request.body, contextFor(request));
    },
  });

  await registerWebApp(app, options.webRoot, service);
  return app;
}

async function registerWebApp(app: FastifyInstance, webRoot: string, service: ServiceContext): Promise<void> {
  const hasWeb = existsSync(webRoot);
  if (hasWeb) await app.register(fastifyStatic, { root: webRoot, prefix: "/", index: false, wildcard: false });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?", 1)[0]!;
    const isApi = path.startsWith("/api/") || path === "/api" || path.startsWith("/mcp");
    // SPEC: unknown non-API routes fall back to the application's index.html.
    if (!isApi && hasWeb && (request.method === "GET" || request.method === "HEAD")) {
      return reply.type("text/html").sendFile("index.html");
    }
    return sendProblem(reply, problemFor(notFound(`no route ${request.method} ${path}`), service.log));
  });
}
