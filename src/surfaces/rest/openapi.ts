// The OpenAPI 3.1 description, derived from the operation registry (SPEC "Versioning").

import { type AnyOperation, fillPath, mountedPath, pathParams, requiredRole } from "../../operations/index.js";
import { type JsonSchema, inputSchemaOf, outputSchemaOf } from "../../operations/schemas.js";

const PROBLEM_REF = { $ref: "#/components/schemas/Problem" };

const PROBLEM_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string" },
    retry_after: { type: "integer", description: "Seconds to wait (429), as in the Retry-After header" },
  },
  required: ["title", "status", "detail", "code"],
};

/** A response that is a Problem (SPEC "Errors"), as each route documents its error statuses. */
export function problemResponse(description: string) {
  return { description, content: { "application/problem+json": { schema: PROBLEM_REF } } };
}

/** `/jobs/:ref/stats` → `/jobs/{ref}/stats` */
const toOpenApiPath = (path: string) => fillPath(path, (name) => `{${name}}`);

function operationObject(op: AnyOperation) {
  const http = op.http!;
  const input = inputSchemaOf(op);
  const properties = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const inPath = pathParams(http.path);
  const parameters: unknown[] = inPath.map((name) => ({ name, in: "path", required: true, schema: properties[name] ?? { type: "string" } }));
  let requestBody: unknown;
  if (http.method === "GET" || http.method === "DELETE") {
    for (const [name, schema] of Object.entries(properties)) {
      if (!inPath.includes(name)) parameters.push({ name, in: "query", required: required.has(name), schema, description: schema.description });
    }
  } else {
    const bodyProps = Object.fromEntries(Object.entries(properties).filter(([name]) => !inPath.includes(name)));
    if (Object.keys(bodyProps).length > 0) {
      const bodyRequired = [...required].filter((name) => !inPath.includes(name));
      requestBody = {
        required: bodyRequired.length > 0,
        content: { "application/json": { schema: { ...input, properties: bodyProps, required: bodyRequired } } },
      };
    }
  }
  const status = String(http.status ?? 200);
  const success =
    status === "204" || status === "202"
      ? { description: status === "204" ? "No Content" : "Accepted" }
      : { description: op.summary, content: { "application/json": { schema: outputSchemaOf(op) } } };
  // Public operations (GET /health) are open; everything else takes the bearer token (SPEC Scheme A rule 6).
  const isPublic = op.access === "public";
  const security = isPublic ? { security: [] } : {};
  return {
    ...security,
    operationId: op.name,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [tagOf(http.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [status]: success,
      ...(isPublic && !http.errors?.includes(401) ? {} : { "401": problemResponse(isPublic ? "Credentials refused" : "Missing or invalid bearer token") }),
      ...(requiredRole(op) === "admin" ? { "403": problemResponse("Needs the admin role (Scheme B)") } : {}),
      ...(inPath.length || http.errors?.includes(404) ? { "404": problemResponse("No such resource") } : {}),
      ...(op.mutates ? { "409": problemResponse("Conflicts with the resource's current state") } : {}),
      ...(isPublic && Object.keys(properties).length === 0 ? {} : { "422": problemResponse("Invalid input") }),
      ...(http.errors?.includes(429) ? { "429": problemResponse("Too many failed logins for this username: wait for Retry-After seconds") } : {}),
      ...(http.errors?.includes(503) ? { "503": problemResponse("A dependency failed (code worker_spawn_failed for a worker that could not start)") } : {}),
    },
  };
}

const tagOf = (path: string) => path.split("/")[1]!.split(":")[0]!;

/** `extraPaths`: routes that are not operations (the event stream), described where they are served. */
export function buildOpenApiDocument(operations: readonly AnyOperation[], version: string, extraPaths: Record<string, Record<string, unknown>> = {}) {
  const paths: Record<string, Record<string, unknown>> = { ...extraPaths };
  for (const op of operations) {
    if (!op.http) continue;
    const key = toOpenApiPath(mountedPath(op.http));
    (paths[key] ??= {})[op.http.method.toLowerCase()] = operationObject(op);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "jobhouse",
      version,
      description: "Job orchestration: jobs, tasks, workers and data objects. Every operation is also an MCP tool at /mcp and a CLI command.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT or static token",
          description: "SERVICE_AUTH=token: the SERVICE_API_TOKEN. SERVICE_AUTH=users: the access_token from POST /api/v0/auth/login.",
        },
      },
    },
    security: [{ bearer: [] }],
  };
}
