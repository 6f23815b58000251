// Keeps the dependency direction of ARCHITECTURE.md true: reads every import and fails on a
// forbidden edge, and checks every operation has a route, a tool or a command as declared.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { operations } from "../src/operations/index.js";

const SRC = join(import.meta.dirname, "..", "src");

const ALLOWED: Record<string, string[]> = {
  core: [],
  models: ["core"],
  store: ["core"],
  data: ["core"],
  // What task code calls on data objects; the running task's plane comes from the engine at run time
  // (objects/current-plane.ts), never by import.
  objects: ["core", "store", "data"],
  engine: ["core", "store", "data", "objects"],
  sdk: ["core", "data", "objects", "engine"],
  operations: ["core", "models", "store", "data", "objects", "engine"],
  "surfaces/rest": ["core", "models", "operations", "surfaces/mcp"],
  "surfaces/mcp": ["core", "models", "operations"],
  "surfaces/cli": ["core", "models", "operations"],
  app: ["core", "models", "store", "data", "objects", "engine", "sdk", "operations", "surfaces/rest", "surfaces/mcp", "surfaces/cli"],
};

function layerOf(path: string): string {
  const parts = relative(SRC, path).split("/");
  return parts[0] === "surfaces" ? `surfaces/${parts[1]}` : parts[0]!;
}

function* sourceFiles(dir: string, extensions = [".ts"]): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path, extensions);
    else if (extensions.some((ext) => entry.name.endsWith(ext)) && !/\.test\.tsx?$/.test(entry.name)) yield path;
  }
}

describe("architecture", () => {
  it("imports only follow the allowed dependency direction", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = layerOf(file);
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const target = layerOf(join(file, "..", match[1]!));
        if (target !== from && !(ALLOWED[from] ?? []).includes(target)) violations.push(`${relative(SRC, file)} → ${match[1]}`);
      }
      // Operations carry surface addresses as data; they never import a transport.
      if (from === "operations" && /from "(fastify|commander|@modelcontextprotocol\/sdk[^"]*)"/.test(text)) {
        violations.push(`${relative(SRC, file)} imports a transport library`);
      }
      if (from !== "core" && /process\.env/.test(text)) violations.push(`${relative(SRC, file)} reads process.env (only core/config.ts may)`);
    }
    expect(violations).toEqual([]);
  });

  const ZOD_FREE_MODELS = new Set(["../src/models/status-names.js", "../src/models/events.js"]);
  it("the web app imports nothing of ours but the wire models, and only their types or zod-free modules", () => {
    const WEB = join(import.meta.dirname, "..", "web", "src");
    const violations: string[] = [];
    for (const file of sourceFiles(WEB, [".ts", ".tsx"])) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gm)) {
        const target = relative(join(WEB, ".."), join(file, "..", match[2]!));
        if (!target.startsWith("..")) continue; // inside web/
        const models = target.startsWith("../src/models/");
        // A value import of a schema module would bundle zod into the page.
        const zodFree = ZOD_FREE_MODELS.has(target);
        if (!models || (!match[1] && !zodFree)) violations.push(`${relative(WEB, file)} → ${match[2]}`);
      }
    }
    expect(violations).toEqual([]);
  });

  const HTTP_ONLY = new Set(["login", "refresh_token", "logout"]);
  it("every operation is reachable: MCP tools have routes, routes have commands", () => {
    for (const op of operations) {
      if (op.mcp) expect(op.http, `${op.name} is a tool without a route`).toBeDefined();
      // Except the session operations: the CLI runs in-process and never holds a session (SPEC).
      if (op.http && !HTTP_ONLY.has(op.name)) expect(op.cli, `${op.name} has a route but no command`).toBeDefined();
    }
  });

  it("operation names are unique and snake_case", () => {
    const names = operations.map((op) => op.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });
});
