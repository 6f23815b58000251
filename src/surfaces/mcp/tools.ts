// MCP tool descriptions and calls, one tool per operation marked `mcp` (SPEC "MCP surface").

import { type ProblemBody, toProblem } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";
import { type AnyOperation, type OperationContext, invoke } from "../../operations/index.js";
import { inputSchemaOf, outputSchemaOf } from "../../operations/schemas.js";
import { portableSchema } from "./portable-schema.js";

export const toolOperations = (operations: readonly AnyOperation[]) => operations.filter((op) => op.mcp);

/** What a tool without data answers (REST's 202 and 204 have no body): an empty object. */
const EMPTY_OUTPUT = { type: "object" as const, description: "Empty: the call succeeded and has no data to return", properties: {}, additionalProperties: false };

export function describeTool(op: AnyOperation) {
  const output = outputSchemaOf(op);
  return {
    name: op.name,
    // A short display name (list_jobs → "List jobs"); the summary is the description's first sentence.
    title: toolTitle(op.name),
    description: op.description ? `${op.summary}. ${op.description}` : op.summary,
    inputSchema: portableSchema({ ...inputSchemaOf(op), type: "object" }) as { type: "object" },
    // MCP output schemas describe an object; operations without a body answer an empty one.
    outputSchema: output.type === "object" ? (portableSchema(output) as { type: "object" }) : EMPTY_OUTPUT,
    annotations: {
      readOnlyHint: !op.mutates,
      // Only meaningful for tools that change things (MCP spec): see Operation.destructive/idempotent.
      destructiveHint: op.mutates && op.destructive === true,
      idempotentHint: !op.mutates || op.idempotent === true,
      openWorldHint: false,
    },
  };
}

const toolTitle = (name: string) => name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ");

export type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** Errors come back as tool errors whose text is the Problem (code and detail included). */
export function toolError(problem: ProblemBody): ToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(problem) }] };
}

export async function callTool(op: AnyOperation, args: unknown, ctx: OperationContext, log: Logger): Promise<ToolResult> {
  try {
    const output = await invoke(op, args ?? {}, ctx);
    if (output === undefined) return { content: [{ type: "text", text: "{}" }], structuredContent: {} };
    return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
  } catch (error) {
    return toolError(toProblem(error, log));
  }
}
