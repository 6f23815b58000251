// REST routes generated from the operation registry: one route per operation with an HTTP address.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalid } from "../../core/errors.js";
import { type AnyOperation, type OperationContext, invoke } from "../../operations/index.js";
import { coerceTextInput } from "../../operations/schemas.js";

export const API_PREFIX = "/api/v0";

/** find-my-way reads `:x` anywhere as a parameter; a literal colon inside a segment is written `::`. */
export function toRouterPath(path: string): string {
  return path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? segment : segment.replace(/:/g, "::")))
    .join("/");
}

export const urlOf = (op: AnyOperation): string => (op.http!.absolute ? op.http!.path : API_PREFIX + op.http!.path);

function inputOf(op: AnyOperation, request: FastifyRequest): unknown {
  const params = (request.params ?? {}) as Record<string, string>;
  const method = op.http!.method;
  if (method === "GET" || method === "DELETE") {
    return coerceTextInput(op, { ...(request.query as Record<string, unknown>), ...params });
  }
  const body = request.body ?? {};
  if (typeof body !== "object" || Array.isArray(body)) throw invalid("request body must be a JSON object");
  return { ...(body as Record<string, unknown>), ...params };
}

export function registerOperationRoutes(
  app: FastifyInstance,
  operations: readonly AnyOperation[],
  contextFor: (request: FastifyRequest) => OperationContext,
): void {
  for (const op of operations) {
    if (!op.http) continue;
    const { method, status = 200, location } = op.http;
    app.route({
      method,
      url: toRouterPath(urlOf(op)),
      handler: async (request, reply) => {
        const output = await invoke(op, inputOf(op, request), contextFor(request));
        if (location) reply.header("Location", (location as (o: unknown) => string)(output));
        reply.code(status);
        return status === 204 || output === undefined ? reply.send() : reply.send(output);
      },
    });
  }
}
