// The OpenAPI 3.1 description, derived from the operation registry (SPEC "Versioning").

import { type AnyOperation, fillPath, inputModelOf, mountedPath, pathParams, requiredRole } from "../../operations/index.js";
import { type JsonSchema, inputSchemaOf } from "../../operations/schemas.js";
import { SchemaComponents } from "./openapi-schemas.js";

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

function operationObject(op: AnyOperation, components: SchemaComponents) {
  const http = op.http!;
  const input = inputSchemaOf(op);
  const properties = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const inPath = pathParams(http.path);
  const parameters: unknown[] = inPath.map((name) => {
    const schema = properties[name] ?? { type: "string" };
    return { name, in: "path", required: true, schema, description: schema.description ?? `The ${name} in the path` };
  });
  let requestBody: unknown;
  if (http.method === "GET" || http.method === "DELETE") {
    for (const [name, schema] of Object.entries(properties)) {
      if (!inPath.includes(name)) parameters.push({ name, in: "query", required: required.has(name), schema, description: schema.description });
    }
  } else {
    const bodyProps = Object.fromEntries(Object.entries(properties).filter(([name]) => !inPath.includes(name)));
    if (Object.keys(bodyProps).length > 0) {
      const bodyRequired = [...required].filter((name) => !inPath.includes(name));
      // The whole input is the body unless some of it travels in the path: then the rest, inline.
      const schema = inPath.length === 0 ? components.schemaOf(inputModelOf(op), "input") : { ...input, properties: bodyProps, required: bodyRequired };
      requestBody = { required: bodyRequired.length > 0, content: { "application/json": { schema } } };
    }
  }
  const status = String(http.status ?? 200);
  const success =
    status === "204" || status === "202"
      ? { description: status === "204" ? "No Content" : "Accepted" }
      : { description: op.summary, content: { "application/json": { schema: components.schemaOf(op.output, "output") } } };
  // Public operations (GET /health) are open; everything else takes the bearer token (SPEC Scheme A rule 6).
  const isPublic = op.access === "public";
  const security = isPublic ? { security: [] } : {};
  return {
    ...security,
    operationId: op.name,
    summary: op.summary,
    description: describeOperation(op),
    tags: [tagOf(http.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [status]: success,
      // Probes take no input, yet the router refuses an unreadable URL like on any route.
      ...(isPublic && Object.keys(properties).length === 0 ? { "400": problemResponse("The request URL could not be read (code bad_url)") } : {}),
      ...(isPublic && !http.errors?.includes(401) ? {} : { "401": problemResponse(isPublic ? "Credentials refused" : "Missing or invalid bearer token") }),
      ...(requiredRole(op) === "admin" ? { "403": problemResponse("Needs the admin role (Scheme B)") } : {}),
      ...(inPath.length || http.errors?.includes(404) ? { "404": problemResponse("No such resource") } : {}),
      ...((http.conflicts ?? op.mutates) ? { "409": problemResponse("Conflicts with the resource's current state") } : {}),
      ...(requestBody ? { "413": problemResponse("The request body is larger than the server takes (code payload_too_large)") } : {}),
      ...(requestBody ? { "415": problemResponse("The request body is not sent as plain JSON: Content-Type must be application/json, in UTF-8 (no other charset), with no Content-Encoding (code unsupported_media_type)") } : {}),
      ...(isPublic && Object.keys(properties).length === 0 ? {} : { "422": problemResponse("Invalid input") }),
      ...(http.errors?.includes(429) ? { "429": problemResponse("Too many failed logins for this username: wait for Retry-After seconds") } : {}),
      ...(http.errors?.includes(503) ? { "503": problemResponse("Unavailable for now: a worker that could not start (code worker_spawn_failed), or too many logins waiting (code busy, with Retry-After)") } : {}),
    },
  };
}

const tagOf = (path: string) => path.split("/")[1]!.split(":")[0]!;

/** Every tag an operation may carry, declared with what it groups (an undeclared one is a bug). */
const TAGS: Record<string, string> = {
  jobs: "Runs of a job: start, list, inspect, cancel, and their statistics",
  tasks: "The tasks of a run: detail and log",
  "registered-jobs": "Jobs registered by name, with defaults and an optional schedule",
  workers: "Worker processes: list, start (distributed mode) and stop",
  objects: "Data objects (ClickHouse tables) with schema and lineage",
  events: "Live job and task changes as server-sent events",
  auth: "Login, token refresh and logout (SERVICE_AUTH=users)",
  users: "User accounts and roles (SERVICE_AUTH=users, admins)",
  health: "Liveness probe",
  ready: "Readiness probe: both stores answer",
  metrics: "Prometheus metrics of the service and its stores",
};

/** What the reader of one operation needs beyond its summary: its other surfaces and who may call it. */
function describeOperation(op: AnyOperation): string {
  const role = requiredRole(op);
  const surfaces = [op.mcp ? `the MCP tool \`${op.name}\`` : null, op.cli ? `the CLI command \`jobhouse ${op.cli.command}\`` : null].filter(Boolean);
  return [
    op.description ?? `${op.summary}.`,
    surfaces.length > 0 ? `Also available as ${surfaces.join(" and ")}.` : null,
    role === null ? "Public: no credentials." : role === "admin" ? "Needs the admin role when users are enabled (SERVICE_AUTH=users)." : "Any authenticated caller (viewers included).",
  ]
    .filter(Boolean)
    .join(" ");
}

function declaredTags(paths: Record<string, Record<string, unknown>>) {
  const used = new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((operation) => (operation as { tags?: string[] }).tags ?? [])));
  for (const tag of used) if (!TAGS[tag]) throw new Error(`OpenAPI tag "${tag}" is not declared in TAGS`);
  return Object.entries(TAGS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
}

/** `extraPaths`: routes that are not operations (the event stream), described where they are served. */
export function buildOpenApiDocument(operations: readonly AnyOperation[], version: string, extraPaths: Record<string, Record<string, unknown>> = {}) {
  const paths: Record<string, Record<string, unknown>> = { ...extraPaths };
  const served = operations.filter((op) => op.http);
  const components = new SchemaComponents(served.flatMap((op) => [inputModelOf(op), op.output]));
  for (const op of served) {
    const key = toOpenApiPath(mountedPath(op.http!));
    (paths[key] ??= {})[op.http!.method.toLowerCase()] = operationObject(op, components);
  }
  const named = components.finish(paths);
  return {
    openapi: "3.1.0",
    info: {
      title: "jobhouse",
      version,
      description: "Job orchestration: jobs, tasks, workers and data objects. Every operation is also an MCP tool at /mcp and a CLI command.",
      license: { name: "MIT", identifier: "MIT" },
      contact: { name: "jobhouse maintainers" },
    },
    servers: [{ url: "/" }],
    tags: declaredTags(named.document),
    paths: named.document,
    components: {
      schemas: { ...named.schemas, Problem: PROBLEM_SCHEMA },
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
