// REST routes generated from the operation registry: one route per operation with an HTTP address.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalid, notFound } from "../../core/errors.js";
import { type AnyOperation, type OperationContext, checkRole, invoke, mountedPath } from "../../operations/index.js";
import { coerceTextInput } from "../../operations/schemas.js";

/** The longest path parameter the router matches; longer names are refused where they are made. */
export const MAX_PATH_PARAM_LENGTH = 500;
const JSON_TYPE = "application/json; charset=utf-8";

// Cached results come back as the same object: serialize each one once. Only those: a WeakMap entry
// per computed result cost as much as serializing a task's view again.
const serialized = new WeakMap<object, string>();
function serializeOnce(output: object): string {
  let text = serialized.get(output);
  if (text === undefined) {
    text = JSON.stringify(output);
    serialized.set(output, text);
  }
  return text;
}

/** find-my-way reads `:x` anywhere as a parameter; a literal colon inside a segment is written `::`. */
export function toRouterPath(path: string): string {
  return path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? segment : segment.replace(/:/g, "::")))
    .join("/");
}

export const urlOf = (op: AnyOperation): string => mountedPath(op.http!);

function inputOf(op: AnyOperation, request: FastifyRequest): unknown {
  const params = (request.params ?? {}) as Record<string, string>;
  // The router matches `/jobs/` as `/jobs/:ref` with an empty ref: a trailing slash names no route
  // here as anywhere else (it was 422, "ref: Too small").
  for (const name in params) {
    if (params[name] === "") throw notFound(`no route ${request.method} ${request.url.split("?", 1)[0]!.slice(0, 200)}`);
  }
  const method = op.http!.method;
  if (method === "GET" || method === "DELETE") {
    if (op.http!.ignoreQuery) return params;
    return coerceTextInput(op, request.query as Record<string, unknown>, params);
  }
  // Its fields come in the body: a query was ignored in silence (`POST /jobs:run?name=x` ran the
  // body's name), where GET refuses a field it does not take.
  const query = Object.keys(request.query as Record<string, unknown>);
  if (query.length > 0) throw invalid(`unknown query parameter(s) ${query.slice(0, 5).join(", ")}: a ${method} takes its fields in the JSON body`);
  const body = request.body ?? {};
  if (typeof body !== "object" || Array.isArray(body)) throw invalid("request body must be a JSON object");
  return Object.assign({}, body, params);
}

export function registerOperationRoutes(
  app: FastifyInstance,
  operations: readonly AnyOperation[],
  authenticate: (request: FastifyRequest) => Promise<void>,
  contextFor: (request: FastifyRequest) => OperationContext,
): void {
  for (const op of operations) {
    if (!op.http) continue;
    const { method, status = 200, location } = op.http;
    app.route({
      method,
      url: toRouterPath(urlOf(op)),
      // The caller and its role before the body is read: a viewer's body to an admin route, however
      // malformed or large, is 403 (SPEC Scheme B rule 9), as an unauthenticated one is 401.
      ...(op.access === "public"
        ? {}
        : {
            onRequest: async (request: FastifyRequest) => {
              await authenticate(request);
              checkRole(op, contextFor(request).principal);
            },
          }),
      handler: async (request, reply) => {
        const context = contextFor(request);
        const output = await invoke(op, inputOf(op, request), context);
        if (location) reply.header("Location", (location as (o: unknown) => string)(output));
        reply.code(status);
        if (status === 204 || output === undefined) return reply.send();
        return op.cacheable && context.results.keeps(output as object) ? reply.type(JSON_TYPE).send(serializeOnce(output as object)) : reply.send(output);
      },
    });
  }
}
