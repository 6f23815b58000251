// The one entry point every surface calls: validate input, check the role, run, validate output.

import type { z } from "zod";
import { forbidden, invalid } from "../core/errors.js";
import type { OperationContext, Principal } from "./context.js";
import { type AnyOperation, type Operation, requiredRole } from "./define.js";
import { type OutputShaper, compileOutputShape } from "./output-shape.js";
import { cacheKey } from "./result-cache.js";
import { dropUnsetNulls } from "./schemas.js";

export async function invoke<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  rawInput: unknown,
  ctx: OperationContext,
): Promise<z.output<O>> {
  // The role first: a caller who may not do this learns nothing about what its input lacked.
  checkRole(op, ctx.principal);
  const input = parseInput(op, rawInput);
  const run = async () => {
    const result = await op.handler(input, ctx);
    // A handler returning the wrong shape is a defect: the shaper throws and the surface answers 500.
    return shaperOf(op)(result) as z.output<O>;
  };
  return op.cacheable ? ctx.results.through(ctx.db, () => cacheKey(op.name, input), run) : run();
}

/**
 * The operation's input, checked: `invalid` (422) naming the field otherwise. The CLI also checks
 * what it sends a local server with it, so a bad argument is refused the same way on every path.
 */
export function parseInput<I extends z.ZodType, O extends z.ZodType>(op: Operation<I, O>, rawInput: unknown): z.output<I> {
  const withNul = fieldWithNul(rawInput);
  if (withNul !== null) throw invalid(`${withNul}: must not contain a NUL character`);
  const parsed = op.input.safeParse(dropUnsetNulls(op as unknown as AnyOperation, rawInput ?? {}));
  // Zod issues become `invalid` here and nowhere else.
  if (!parsed.success) throw invalid(describeIssues(parsed.error));
  return parsed.data;
}

/**
 * As parseInput, blind to one field: the CLI checks the rest before it reads that field (a password)
 * from standard input, so a bad value is refused before anyone is asked for a secret.
 */
export function checkInputBesides(op: AnyOperation, rawInput: Record<string, unknown>, field: string): void {
  const parsed = op.input.safeParse(dropUnsetNulls(op, rawInput));
  if (parsed.success) return;
  const issues = parsed.error.issues.filter((issue) => issue.path[0] !== field);
  if (issues.length > 0) throw invalid(describeIssueList(issues));
}

// Compiled at an operation's first call: most processes call a few of the 40.
const shapers = new WeakMap<Operation, OutputShaper>();
function shaperOf(op: Operation): OutputShaper {
  let shaper = shapers.get(op);
  if (shaper === undefined) {
    shaper = compileOutputShape(op.output, op.name);
    shapers.set(op, shaper);
  }
  return shaper;
}

/**
 * Throws `forbidden` (403) when the principal's role may not run the operation (SPEC Scheme B rule 9).
 * REST also calls it before the body is read, so a viewer's malformed, oversized or non-JSON body to
 * an admin route is 403 like any other, not 413, 415 or 422.
 */
export function checkRole(op: Pick<Operation, "name" | "access" | "mutates">, principal: Principal): void {
  if (requiredRole(op) === "admin" && principal.role !== "admin") {
    throw forbidden(`${op.name} needs the admin role; ${principal.username} is ${principal.role}`);
  }
}

/**
 * The first top-level field whose text holds a NUL character, or null. No name, ref, filter, key or
 * password may hold one, and PostgreSQL refuses it in every text column (a 500 before this check,
 * where SQLite stored or looked it up). JSON-valued fields (kwargs, defaults) are stored as JSON,
 * which escapes it, so they are not looked into.
 */
function fieldWithNul(input: unknown): string | null {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return null;
  for (const [field, value] of Object.entries(input)) {
    const texts = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
    if (texts.some((text) => text.includes("\0"))) return field;
  }
  return null;
}

/** "limit: Too big: expected number to be <=500; kwargs.n: …" */
export function describeIssues(error: z.ZodError): string {
  return describeIssueList(error.issues);
}

function describeIssueList(issues: z.ZodError["issues"]): string {
  // One issue per field: 1e20 for an int with a maximum broke both checks, and said so twice.
  const seen = new Set<string>();
  return issues
    .filter((issue) => {
      const key = issue.path.map(String).join("\0");
      if (key === "") return true;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      const message = issue.code === "unrecognized_keys" ? `unknown field(s) ${issue.keys.join(", ")}` : isMissing(issue) ? "required" : issue.message;
      return path ? `${path}: ${message}` : message;
    })
    .join("; ");
}

/**
 * A union field left out (a RefId: number or string) is "required", not zod's bare "Invalid input",
 * which says nothing to an MCP client that forgot `ref`.
 */
function isMissing(issue: z.core.$ZodIssue): boolean {
  if (issue.code === "invalid_type") return / received undefined$/.test(issue.message);
  if (issue.code === "invalid_union") return issue.errors.length > 0 && issue.errors.every((branch) => branch.some(isMissing));
  return false;
}
