// The MCP server at /mcp: streamable HTTP in stateless mode (each request its own transport), with
// tools/list and tools/call answered from the operation registry.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.js";
import type { AnyOperation, OperationContext } from "../../operations/index.js";
import { callTool, describeTool, toolOperations } from "./tools.js";

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, ctx: OperationContext): Promise<void>;
}

export function createMcpEndpoint(operations: readonly AnyOperation[], version: string, log: Logger): McpEndpoint {
  const tools = toolOperations(operations);
  const byName = new Map(tools.map((op) => [op.name, op]));
  const listing = tools.map(describeTool);

  const serverFor = (ctx: OperationContext) => {
    const server = new Server({ name: "jobhouse", version }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, async (request) =>
      callTool(byName.get(request.params.name), request.params.name, request.params.arguments, ctx, log),
    );
    return server;
  };

  return {
    async handle(req, res, body, ctx) {
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
