// The MCP server at /mcp: streamable HTTP in stateless mode (each request its own transport), with
// tools/list and tools/call answered from the operation registry.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type ProblemBody, invalid, toProblem } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";
import { type AnyOperation, type OperationContext, describeIssues } from "../../operations/index.js";
import { callTool, describeTool, toolError, toolOperations } from "./tools.js";

/** What an agent needs to know before its first call (sent at initialize). */
const INSTRUCTIONS = [
  "jobhouse runs data pipelines written in TypeScript.",
  "A job is a function (an entrypoint \"file.ts:export\") that calls tasks; running it (run_job, with kwargs) makes a job whose tasks form a graph: each task runs once its inputs are ready, is retried on failure as configured, and ends COMPLETED, FAILED, SKIPPED or CANCELLED; the job ends when its tasks have.",
  "A job is named by its numeric id or by its name (a name means its most recent run); list_jobs filters by status, name and time, get_job shows its tasks, get_task a task's arguments, result and error, cancel_job stops one.",
  "register_job stores an entrypoint under a name, with default kwargs and an optional cron schedule; run_job then takes that name.",
  "Tasks make data objects: tables in ClickHouse with a schema and lineage (which task, which operation, which upstream objects), listed by list_objects and read by get_object; temp objects go when their job no longer needs them, job objects with their job, global ones when deleted.",
  "Workers (list_workers) run the tasks. Errors come back as problems with a status, a code and a detail naming the field at fault.",
].join(" ");

export interface McpEndpoint {
  /** `refusal`: why the body's requests must not run (REST's 422 for the same body), if they must not. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, ctx: OperationContext, refusal?: string): Promise<void>;
}

export function createMcpEndpoint(operations: readonly AnyOperation[], version: string, log: Logger): McpEndpoint {
  const tools = toolOperations(operations);
  const byName = new Map(tools.map((op) => [op.name, op]));
  const listing = tools.map(describeTool);

  const serverFor = (ctx: OperationContext) => {
    const server = new Server({ name: "jobhouse", version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    // A call of an unknown tool never gets here: invalidRequests answered it -32602.
    server.setRequestHandler(CallToolRequestSchema, async (request) => callTool(byName.get(request.params.name)!, request.params.arguments, ctx, log));
    return server;
  };

  return {
    async handle(req, res, body, ctx, refusal) {
      // Stateless: there is no session to push to, so no event stream is ever held open for one.
      // The MCP transport spec lets a server answer GET with 405; clients then use POST only.
      // HEAD is answered as GET is (the SDK's own answer to it claimed `Allow: GET, …`), and the
      // refusal is a Problem like every other error (CONTRACT §2).
      // DELETE ends a session, and a stateless server has none: the spec's answer is 405 too (it
      // was a 200 with a JSON-RPC error, while Allow named DELETE).
      if (req.method === "GET" || req.method === "HEAD" || req.method === "DELETE") {
        const detail = req.method === "DELETE" ? "/mcp keeps no session to end: it is stateless, send requests with POST" : "/mcp holds no event stream open: send requests with POST";
        const problem = { title: "Method Not Allowed", status: 405, detail, code: "method_not_allowed" };
        return void res.writeHead(405, { Allow: "POST", "content-type": "application/problem+json; charset=utf-8" }).end(req.method === "HEAD" ? undefined : JSON.stringify(problem));
      }
      const malformed = invalidRequests(body, (name) => byName.has(name));
      if (malformed) return sendJson(res, 200, malformed);
      if (refusal !== undefined) {
        const answers = refusedRequests(body, toProblem(invalid(refusal), log));
        return answers === null ? void res.writeHead(202).end() : sendJson(res, 200, answers);
      }
      const server = serverFor(ctx);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}

type JsonRpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

/** The requests this server answers, checked here as the SDK would check them. */
const REQUEST_SCHEMAS: Record<string, typeof CallToolRequestSchema | typeof ListToolsRequestSchema | typeof InitializeRequestSchema> = {
  "tools/call": CallToolRequestSchema,
  "tools/list": ListToolsRequestSchema,
  initialize: InitializeRequestSchema,
};

/** A JSON-RPC id: a string or an integer (null only in answers that cannot name a request). */
const isRequestId = (id: unknown): boolean => typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

/**
 * A malformed request is the caller's mistake: JSON-RPC -32602 (invalid params) with one line
 * saying what is wrong. The SDK reported a tools/call without params, or with a name that is no
 * string, as an internal error (-32603, a 500's equivalent) carrying its schema's raw report, and
 * a malformed `_meta` as a parse error; an empty batch got 202 and no answer (-32600 is due). A
 * call of a tool this server does not have is -32602 too, as the MCP specification lists it.
 */
function invalidRequests(body: unknown, isTool: (name: string) => boolean): unknown {
  if (Array.isArray(body) && body.length === 0) {
    return { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: "Invalid Request: an empty batch" } };
  }
  const messages = (Array.isArray(body) ? body : [body]) as JsonRpcMessage[];
  const errors = messages.flatMap((m): object[] => {
    // JSON, but no JSON-RPC message (null, no "jsonrpc", an id of 1.5): -32600, not the SDK's
    // -32700, which says the text was not JSON. A response (result or error) is left to the SDK.
    if (typeof m !== "object" || m === null || Array.isArray(m)) return [invalidRequest(null, "not a JSON-RPC message object")];
    if ("result" in m || "error" in m) return [];
    if (m.jsonrpc !== "2.0") return [invalidRequest(isRequestId(m.id) ? m.id : null, 'jsonrpc must be "2.0"')];
    if (typeof m.method !== "string") return [invalidRequest(isRequestId(m.id) ? m.id : null, "method must be a string")];
    if ("id" in m && !isRequestId(m.id)) return [invalidRequest(null, "id must be a string or an integer")];
    // A notification (no id) is never answered, not even with an error (JSON-RPC 2.0).
    if (!("id" in m)) return [];
    const schema = REQUEST_SCHEMAS[m.method];
    const checked = schema?.safeParse(m);
    if (!checked) return [];
    if (!checked.success) return [{ jsonrpc: "2.0", id: m.id ?? null, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${describeIssues(checked.error)}` } }];
    const tool = m.method === "tools/call" ? (m.params as { name: string }).name : null;
    if (tool === null || isTool(tool)) return [];
    return [{ jsonrpc: "2.0", id: m.id ?? null, error: { code: ErrorCode.InvalidParams, message: `Unknown tool: ${JSON.stringify(tool.slice(0, 100))}` } }];
  });
  if (errors.length === 0) return null;
  if (!Array.isArray(body)) return errors[0];
  // Nothing of a batch with an invalid request runs, and each of its requests is told so: the
  // valid ones were dropped without an answer (JSON-RPC owes one per request with an id).
  const failed = new Set(errors.map((e) => (e as { id: unknown }).id));
  const notRun = messages
    .filter((m) => typeof m === "object" && m !== null && isRequestId(m.id) && !failed.has(m.id) && typeof m.method === "string")
    .map((m) => invalidRequest(m.id, "not run: another request of this batch is invalid, so none of it ran"));
  return [...errors, ...notRun];
}

/**
 * The answers to well-formed requests whose body must not run (a number JSON.parse changed, a
 * prototype key): a tool call gets the Problem REST gives the same arguments, as a tool error;
 * any other request -32602. Notifications get nothing; null when nothing is owed an answer.
 */
function refusedRequests(body: unknown, problem: ProblemBody): unknown {
  const answers = ((Array.isArray(body) ? body : [body]) as JsonRpcMessage[])
    // Requests only: a response (result or error) is never answered, nor is a notification.
    .filter((m) => "id" in m && typeof m.method === "string")
    .map((m) => {
      // An id JSON.parse rounded is not the caller's: null, as JSON-RPC answers an id it cannot read.
      const id = typeof m.id === "number" && !Number.isSafeInteger(m.id) ? null : m.id;
      return m.method === "tools/call" && id !== null
        ? { jsonrpc: "2.0", id, result: toolError(problem) }
        : { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problem.detail}` } };
    });
  if (answers.length === 0) return null;
  return Array.isArray(body) ? answers : answers[0];
}

const invalidRequest = (id: unknown, why: string) => ({ jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${why}` } });

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}
