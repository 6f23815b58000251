// The shape of an operation: data (name, schemas, surface addresses) plus one handler
// (ARCHITECTURE "The shape of an operation"). Surfaces are loops over these definitions.

import { z } from "zod";
import type { OperationContext } from "./context.js";

export type Access = "public" | "viewer" | "admin";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface HttpBinding {
  method: HttpMethod;
  /** Relative to /api/v0 unless `absolute`; `:name` segments are path parameters. */
  path: string;
  /** Success status; 200 unless given. 204 sends no body. */
  status?: number;
  /** Mounted outside /api/v0 (e.g. GET /health). */
  absolute?: boolean;
  /** A `Location` header for the response, from the output. */
  location?: (output: never) => string;
  /** Error statuses beyond those the method implies (OpenAPI), e.g. 404 for a name to look up. */
  errors?: number[];
  /** Whether it can answer 409 (OpenAPI); by default, whether it mutates. */
  conflicts?: boolean;
  /** Query strings are ignored rather than validated (probes add cache-busting parameters). */
  ignoreQuery?: boolean;
}

export interface CliBinding {
  /** Words then positional arguments, e.g. "job cancel <ref>". */
  command: string;
  /** Command lines shown under "Examples:" in the command's --help (at least one per command). */
  examples?: string[];
  /** Columns of the human table for list results (fields of the items). */
  columns?: string[];
  /** Compact columns of tables inside a detail (`job get`'s tasks); `--wide` shows them all. */
  detailColumns?: Record<string, string[]>;
  /** The one-line confirmation printed by mutating commands. */
  confirm?: (output: never) => string;
  /** The output is a job the command can follow with `--wait`. */
  follow?: boolean;
  /** The output is a task's log the command can follow with `--follow` until the task ends. */
  followLog?: boolean;
  /** An input field (a password) read as one line of standard input when its option is not given. */
  stdin?: string;
  /**
   * A human view the CLI draws instead of the generic detail ("lineage": an object with its
   * upstream tree; "log": a task's log as text).
   */
  view?: "lineage" | "log";
  /** Bare flags that set an input field to a value (`--all` for `from: "all"`). */
  flags?: Record<string, { field: string; value: unknown; description: string }>;
}

export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  description?: string;
  /** Changes state (MCP hints, OpenAPI's 409); who may call it is `access`. */
  mutates: boolean;
  /** A mutation that ends or removes something for good (a cancel, a delete): MCP's destructiveHint. */
  destructive?: boolean;
  /** A mutation that, repeated with the same input, changes nothing more: MCP's idempotentHint. */
  idempotent?: boolean;
  /**
   * Who may call it: `public` needs no credentials (GET /health), `viewer` any authenticated
   * caller, `admin` the admin role. Every surface reads this; none keeps its own list of routes.
   */
  access: Access;
  input: I;
  output: O;
  http?: HttpBinding;
  cli?: CliBinding;
  /** Exposed as an MCP tool; SPEC lists exactly 17. */
  mcp: boolean;
  /** Needs the column store: the CLI sends these to a running local server (chDB's lock). */
  usesColumnStore?: boolean;
  /**
   * The output depends only on the input and the orchestration store (no clock, no column store),
   * so it may be answered from the result cache while the store is unchanged.
   */
  cacheable?: boolean;
  handler(input: z.output<I>, ctx: OperationContext): Promise<z.input<O>>;
}

export type AnyOperation = Operation<z.ZodType, z.ZodType>;

/**
 * The role an operation needs (SPEC Scheme B rule 9): none for `public`, admin for whatever
 * mutates and for admin-only reads (users), viewer for every other read. Derived from `mutates`,
 * so a new mutating operation cannot be left open to viewers by a forgotten list entry.
 */
export function requiredRole(op: Pick<Operation, "access" | "mutates">): "admin" | "viewer" | null {
  if (op.access === "public") return null;
  return op.mutates || op.access === "admin" ? "admin" : "viewer";
}

/** The model an operation's strict input was made from (its name in the OpenAPI document). */
const modelOfInput = new WeakMap<z.ZodType, z.ZodType>();
export const inputModelOf = (op: Pick<AnyOperation, "input">): z.ZodType => modelOfInput.get(op.input) ?? op.input;

/** Inputs are strict: an unknown field is a typo to report, not something to ignore. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType>(op: Operation<I, O>): Operation<I, O> {
  const input = op.input instanceof z.ZodObject ? (op.input.strict() as unknown as I) : op.input;
  if (input !== op.input) modelOfInput.set(input, op.input);
  return { ...op, input };
}
