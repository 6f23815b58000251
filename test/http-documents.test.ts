// The OpenAPI document, the documentation pages, the web app fallback and the MCP tool listing.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createObject } from "../src/objects/data-object.js";
import { scopePlane } from "../src/objects/scope-plane.js";
import { operations } from "../src/operations/index.js";
import type { JsonSchema } from "../src/operations/schemas.js";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";
import { redoclyFindings, spectralFindings } from "./support/openapi-lint.js";

const ROOT = join(import.meta.dirname, "..");
const execFileAsync = promisify(execFile);

const SPEC_TOOLS = [
  "list_jobs", "get_job", "job_stats", "cancel_job", "run_job", "register_job", "list_registered_jobs", "enable_job",
  "disable_job", "list_workers", "start_worker", "stop_worker", "list_objects", "get_object", "delete_object",
  "purge_objects", "get_task",
];

const SPEC_PATHS: [string, string][] = [
  ["get", "/api/v0/jobs"], ["get", "/api/v0/jobs/{ref}"], ["get", "/api/v0/jobs/{ref}/stats"], ["post", "/api/v0/jobs/{ref}/cancel"],
  ["post", "/api/v0/jobs:run"], ["post", "/api/v0/registered-jobs"], ["get", "/api/v0/registered-jobs"],
  ["post", "/api/v0/registered-jobs/{name}/enable"], ["post", "/api/v0/registered-jobs/{name}/disable"],
  ["get", "/api/v0/tasks/{id}"], ["get", "/api/v0/tasks/{id}/logs"], ["get", "/api/v0/workers"], ["post", "/api/v0/workers"],
  ["post", "/api/v0/workers/{id}/stop"], ["get", "/api/v0/objects"], ["get", "/api/v0/objects/{name}"],
  ["delete", "/api/v0/objects/{name}"], ["post", "/api/v0/objects:purge"], ["get", "/api/v0/auth/me"], ["get", "/health"],
];

forEachBackend("HTTP documents", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  it("OpenAPI lists every path of the spec and validates as OpenAPI 3.1", async () => {
    const { status, body } = await h.http("GET", "/api/v0/openapi.json");
    expect(status).toBe(200);
    const doc = body as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
    expect(doc.openapi).toBe("3.1.0");
    for (const [method, path] of SPEC_PATHS) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    // Every operation, and the event stream (CONTRACT §10), which is a route but no operation.
    expect(ids.sort()).toEqual([...operations.filter((op) => op.http).map((op) => op.name), "stream_events"].sort());
    expect(doc.paths["/api/v0/events"]?.get).toMatchObject({ responses: { "200": { content: { "text/event-stream": {} } } } });
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("OpenAPI documents 409 only where a route can answer it", async () => {
    const doc = (await h.http("GET", "/api/v0/openapi.json")).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const has409 = (method: string, path: string) => "409" in doc.paths[path]![method]!.responses;
    for (const [method, path] of [["post", "/api/v0/jobs:run"], ["post", "/api/v0/jobs/{ref}/cancel"], ["post", "/api/v0/registered-jobs"], ["post", "/api/v0/workers/{id}/stop"]]) {
      expect(has409(method!, path!), `${method} ${path}`).toBe(true);
    }
    const never: [string, string][] = [
      ["post", "/api/v0/registered-jobs/{name}/enable"], ["post", "/api/v0/registered-jobs/{name}/disable"], ["post", "/api/v0/workers"],
      ["post", "/api/v0/auth/login"], ["post", "/api/v0/auth/refresh"], ["post", "/api/v0/auth/logout"], ["put", "/api/v0/users/{ref}/password"],
    ];
    for (const [method, path] of never) expect(has409(method, path), `${method} ${path}`).toBe(false);
    // Enabling or disabling twice is no conflict: the same answer again.
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "twice", schedule: "0 1 * * *" });
    for (const action of ["disable", "disable", "enable", "enable"]) expect((await h.http("POST", `/api/v0/registered-jobs/twice/${action}`)).status).toBe(200);
  });

  it("OpenAPI passes Redocly's recommended rules and Spectral's oas rules with no error or warning", async () => {
    const doc = (await h.http("GET", "/api/v0/openapi.json")).body;
    expect(await redoclyFindings(doc)).toEqual([]);
    expect(await spectralFindings(doc)).toEqual([]);
  });

  it("OpenAPI names every model as a component, with date-time timestamps, described operations and declared tags", async () => {
    type Operation = { description?: string; tags: string[]; parameters?: { description?: string }[]; requestBody?: { content: Record<string, { schema: { $ref?: string } }> }; responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> };
    const doc = (await h.http("GET", "/api/v0/openapi.json")).body as {
      info: { license?: { name: string }; contact?: object };
      tags: { name: string; description: string }[];
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, { format?: string; anyOf?: { format?: string }[] }> }> };
    };
    const response = (method: string, path: string) => doc.paths[path]![method]!.responses["200"]!.content!["application/json"]!.schema.$ref;
    expect(response("get", "/api/v0/jobs/{ref}")).toBe("#/components/schemas/JobDetail");
    expect(response("get", "/api/v0/tasks/{id}")).toBe("#/components/schemas/TaskDetail");
    expect(response("get", "/api/v0/jobs")).toBe("#/components/schemas/JobPage");
    expect(doc.paths["/api/v0/jobs:run"]!.post!.requestBody!.content["application/json"]!.schema.$ref).toBe("#/components/schemas/RunJobRequest");
    for (const name of ["JobView", "JobDetail", "TaskDetail", "JobTaskView", "WorkerView", "ObjectDetail", "RegisteredJobView", "JobStatus", "Problem"]) expect(doc.components.schemas[name], name).toBeDefined();
    // Every $ref points at a component that exists.
    for (const [, ref] of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) expect(doc.components.schemas[ref!], ref).toBeDefined();
    const job = doc.components.schemas.JobView!.properties!;
    expect(job.created_at!.format).toBe("date-time");
    expect(job.completed_at!.anyOf![0]!.format).toBe("date-time");
    expect(doc.info.license?.name).toBe("MIT");
    expect(doc.info.contact).toBeDefined();
    const declared = new Set(doc.tags.map((t) => t.name));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.description, `${method} ${path}`).toBeTruthy();
        expect(declared.has(op.tags[0]!), `${method} ${path} tag ${op.tags[0]}`).toBe(true);
        for (const parameter of op.parameters ?? []) expect(parameter.description, `${method} ${path} parameter`).toBeTruthy();
      }
    }
  });

  it("serves Swagger UI and ReDoc from its own files", async () => {
    const docs = await h.http("GET", "/api/v0/docs");
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("/api/v0/docs/assets/swagger-ui-bundle.js");
    expect(docs.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const bundle = await h.http("GET", "/api/v0/docs/assets/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
    const redoc = await h.http("GET", "/api/v0/redoc");
    expect(redoc.status).toBe(200);
    expect(redoc.text).toContain("/api/v0/redoc/assets/redoc.standalone.js");
    expect((await h.http("GET", "/api/v0/redoc/assets/redoc.standalone.js")).status).toBe(200);
  });

  it("falls back to index.html for unknown non-API routes, never for the API", async () => {
    // A name that merely begins like the API's root is no API route (`/apix` answered a Problem).
    for (const path of ["/", "/?p=jobs", "/some/deep/link", "/apix", "/mcpx/page"]) {
      const page = await h.http("GET", path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      expect(page.text).toContain("<title>jobhouse</title>");
    }
    for (const path of ["/api/v0/unknown", "/api", "/API/v0/jobs", "/mcp/x"]) expect((await h.http("GET", path)).status, path).toBe(404);
  });

  it("GET /health is a liveness probe", async () => {
    const { status, body } = await h.http("GET", "/health");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", mode: backend.name });
  });

  it("GET /auth/me is the synthetic admin while authentication is off", async () => {
    const { body } = await h.http("GET", "/api/v0/auth/me");
    expect(body).toEqual({ id: "0", username: "admin", role: "admin" });
  });

  it("MCP tools/list returns exactly the 17 tools through the SDK client", async () => {
    const client = await h.mcp();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...SPEC_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type).toBe("object");
      // A display name, not the description again (found by an agent trial).
      expect(tool.title, tool.name).toBe(tool.name.charAt(0).toUpperCase() + tool.name.slice(1).replaceAll("_", " "));
    }
    const withOutput = tools.filter((t) => t.outputSchema).map((t) => t.name);
    expect(withOutput).toEqual(expect.arrayContaining(["list_jobs", "get_job", "run_job", "get_task", "purge_objects"]));
  });

  it("MCP tools pass the official Inspector's --strict portability check, describe every input with an example and declare their outputs and hints", async () => {
    const url = `${await h.listen()}/mcp`;
    const inspector = join(ROOT, "node_modules/@modelcontextprotocol/inspector/package.json");
    const bin = join(dirname(inspector), (JSON.parse(readFileSync(inspector, "utf8")) as { bin: Record<string, string> }).bin["mcp-inspector"]!);
    const { stdout, stderr } = await execFileAsync(process.execPath, [bin, "--cli", url, "--method", "tools/list", "--strict"], { timeout: 60_000 });
    expect(stderr.trim()).toBe("");
    const { tools } = JSON.parse(stdout) as { tools: { name: string; inputSchema: JsonSchema; outputSchema?: JsonSchema; annotations: Record<string, boolean> }[] };
    expect(tools).toHaveLength(17);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect(property.description, `${tool.name}.${name}`).toBeTruthy();
        expect(property.examples, `${tool.name}.${name}`).toBeDefined();
      }
    }
    // Found by trying the product: every list tool refused the cursor its own schema gave as an example.
    const mcp = await h.mcp();
    for (const tool of tools) {
      const example = (tool.inputSchema.properties?.cursor?.examples as string[] | undefined)?.[0];
      if (example === undefined || tool.name === "purge_objects") continue;
      const answer = (await mcp.callTool({ name: tool.name, arguments: { cursor: example } })) as { isError?: boolean; content: { text: string }[] };
      expect(answer.isError, `${tool.name}: ${answer.content[0]?.text}`).toBeFalsy();
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.run_job).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(hints.enable_job).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(hints.delete_object).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(hints.cancel_job).toMatchObject({ destructiveHint: true });
    expect(hints.get_job).toMatchObject({ readOnlyHint: true });
    // A tool without data answers with the empty object its schema declares.
    const ds = { db: h.service.db, columns: await h.service.columns(), ids: h.service.ids, clock: h.service.clock, jobId: null, taskId: null, attempt: null };
    await createObject({ x: [1] }, { name: "mcp_doomed" }, scopePlane(ds));
    const deleted = await (await h.mcp()).callTool({ name: "delete_object", arguments: { name: "mcp_doomed" } });
    expect(deleted).toMatchObject({ structuredContent: {} });
    expect(deleted.isError).toBeFalsy();
  });

  it("MCP explains the model at initialize, and a missing argument is named", async () => {
    const client = await h.mcp();
    const instructions = client.getInstructions() ?? "";
    for (const word of ["job", "task", "run_job", "register_job", "data objects", "lineage", "most recent run"]) expect(instructions).toContain(word);
    const missing = await client.callTool({ name: "get_job", arguments: {} });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content as { text: string }[])[0]!.text)).toMatchObject({ code: "invalid", detail: expect.stringMatching(/^ref\b/) });
  });

  it("MCP surfaces NotFound, Conflict and Invalid as tool errors with code and detail", async () => {
    const client = await h.mcp();
    const missing = await client.callTool({ name: "get_job", arguments: { ref: "424242" } });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content as { text: string }[])[0]!.text)).toMatchObject({ code: "not_found", status: 404 });
    const bad = await client.callTool({ name: "list_jobs", arguments: { limit: 9999 } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content as { text: string }[])[0]!.text)).toMatchObject({ code: "invalid", detail: expect.stringMatching(/^limit/) });
    await client.callTool({ name: "register_job", arguments: { entrypoint: "test/fixtures/jobs.ts:hello", name: "twice" } });
    const conflict = await client.callTool({ name: "register_job", arguments: { entrypoint: "test/fixtures/jobs.ts:hello", name: "twice" } });
    expect(JSON.parse((conflict.content as { text: string }[])[0]!.text)).toMatchObject({ code: "name_taken", status: 409 });
  });
});
