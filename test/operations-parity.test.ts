// Each operation through REST, MCP and the CLI returns the same view model (one parametrised suite).

import { afterAll, beforeAll, expect, it } from "vitest";
import { operationByName } from "../src/operations/index.js";
import { forEachBackend } from "./support/backends.js";
import { addObject, addWorker } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

type Input = Record<string, unknown>;

/** Calls an operation the way an outside REST client would, from its documented address. */
async function viaRest(h: Harness, name: string, input: Input): Promise<unknown> {
  const op = operationByName.get(name)!;
  const rest = { ...input };
  const path = op.http!.path.replace(/\/:([a-z_]+)/g, (_, p: string) => {
    const v = encodeURIComponent(String(rest[p]));
    delete rest[p];
    return "/" + v;
  });
  const prefix = op.http!.absolute ? "" : "/api/v0";
  const query = op.http!.method === "GET" ? "?" + new URLSearchParams(rest as Record<string, string>).toString() : "";
  const result = await h.http(op.http!.method, prefix + path + query, op.http!.method === "GET" ? undefined : rest);
  expect(result.status, result.text).toBe(op.http!.status ?? 200);
  return result.body;
}

async function viaMcp(h: Harness, name: string, input: Input): Promise<unknown> {
  const client = await h.mcp();
  const result = await client.callTool({ name, arguments: input });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  // An operation without data answers REST with no body (null here) and MCP with an empty object.
  const op = operationByName.get(name)!;
  if (op.http!.status === 204 || op.http!.status === 202) {
    expect(result.structuredContent).toEqual({});
    return null;
  }
  return result.structuredContent;
}

async function viaCli(h: Harness, name: string, input: Input): Promise<unknown> {
  const op = operationByName.get(name)!;
  const parts = op.cli!.command.split(" ");
  const argv: string[] = [];
  const rest = { ...input };
  for (const part of parts) {
    if (!part.startsWith("<") && !part.startsWith("[")) argv.push(part);
    else {
      const key = part.slice(1, -1);
      if (rest[key] !== undefined) argv.push(String(rest[key]));
      delete rest[key];
    }
  }
  for (const [key, value] of Object.entries(rest)) argv.push(`--${key.replace(/_/g, "-")}`, typeof value === "object" ? JSON.stringify(value) : String(value));
  const result = await h.cli(...argv, "--json");
  expect(result.code, result.err).toBe(0);
  return result.out.trim() === "" ? undefined : JSON.parse(result.out);
}

/** Different runs create different ids and times; everything else must be equal. */
function mask(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null)
      .replace(/"\d{15,20}"/g, '"<id>"')
      .replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/g, '"<time>"')
      .replace(/"(t|p|j)_\d+(_[a-z0-9_]+)?"/g, '"<table>"')
      .replace(/_(rest|cli|mcp)\b/g, "_<surface>")
      // How long a readiness check took.
      .replace(/"ms":[\d.]+/g, '"ms":"<ms>"'),
  );
}

interface Scenario {
  op: string;
  /** Arranges what the call needs and returns its input; runs once per surface for mutations. */
  arrange(h: Harness, surface: string): Promise<Input>;
  mcp?: boolean;
}

const scenarios: Scenario[] = [
  { op: "list_jobs", arrange: async () => ({ limit: 10 }) },
  { op: "get_job", arrange: async () => ({ ref: "parity" }) },
  { op: "job_stats", arrange: async () => ({ ref: "parity" }) },
  { op: "list_job_attempts", mcp: false, arrange: async () => ({ ref: "parity", limit: 10 }) },
  { op: "cancel_job", arrange: async (h) => ({ ref: ((await h.call("run_job", { name: "test/fixtures/jobs.ts:hello" })) as { id: string }).id }) },
  { op: "run_job", arrange: async () => ({ name: "parity", kwargs: { n: 3 } }) },
  {
    op: "register_job",
    arrange: async (_h, surface) => ({ entrypoint: "test/fixtures/jobs.ts:hello", name: `nightly_${surface}`, schedule: "0 3 * * *", defaults: { a: 1 } }),
  },
  { op: "list_registered_jobs", arrange: async () => ({ limit: 5 }) },
  { op: "enable_job", arrange: async () => ({ name: "parity" }) },
  { op: "disable_job", arrange: async () => ({ name: "parity" }) },
  { op: "list_workers", arrange: async () => ({}) },
  { op: "stop_worker", arrange: async (h) => ({ id: await addWorker(h) }) },
  { op: "list_objects", arrange: async () => ({ scope: "global" }) },
  { op: "get_object", arrange: async () => ({ name: "sales" }) },
  { op: "delete_object", arrange: async (h, surface) => ({ name: await addObject(h, `gone_${surface}`) }) },
  { op: "purge_objects", arrange: async (h, surface) => (await addObject(h, `old_${surface}`), { prefix: `old_${surface}` }) },
  { op: "get_task", arrange: async (h) => ({ id: ((await h.call("get_job", { ref: "parity" })) as { tasks: { id: string }[] }).tasks[0]!.id }) },
  { op: "get_task_logs", mcp: false, arrange: async (h) => ({ id: ((await h.call("get_job", { ref: "parity" })) as { tasks: { id: string }[] }).tasks[0]!.id }) },
  { op: "health", mcp: false, arrange: async () => ({}) },
  { op: "ready", mcp: false, arrange: async () => ({}) },
  { op: "get_me", mcp: false, arrange: async () => ({}) },
  { op: "create_user", mcp: false, arrange: async (_h, surface) => ({ username: `new_${surface}`, password: "correct horse", role: "viewer" }) },
  { op: "list_users", mcp: false, arrange: async () => ({ limit: 10 }) },
  { op: "get_user", mcp: false, arrange: async (h, surface) => ({ ref: await addUser(h, `seen_${surface}`) }) },
  { op: "set_user_role", mcp: false, arrange: async (h, surface) => ({ ref: await addUser(h, `promoted_${surface}`), role: "admin" }) },
  { op: "disable_user", mcp: false, arrange: async (h, surface) => ({ ref: await addUser(h, `leaving_${surface}`) }) },
  { op: "enable_user", mcp: false, arrange: async (h, surface) => ({ ref: await addUser(h, `returning_${surface}`) }) },
  { op: "set_user_password", mcp: false, arrange: async (h, surface) => ({ ref: await addUser(h, `forgetful_${surface}`), password: "a new secret" }) },
];

/** A viewer named `username`, created in-process; returns the name as the ref. */
async function addUser(h: Harness, username: string): Promise<string> {
  await h.call("create_user", { username, password: "correct horse", role: "viewer" });
  return username;
}

forEachBackend("every operation answers alike on REST, MCP and CLI", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "parity", schedule: "*/5 * * * *" });
    await h.call("run_job", { name: "parity", kwargs: { n: 1 } });
    await addObject(h, "sales", "global", 5);
  });
  afterAll(() => h?.close());

  it("covers every operation that has a REST address", () => {
    const covered = new Set(scenarios.map((s) => s.op));
    // Session operations (login, refresh, logout) have no command: the CLI holds no session.
    const withHttp = [...operationByName.values()].filter((op) => op.http && op.cli).map((op) => op.name);
    expect(withHttp.filter((name) => !covered.has(name) && name !== "start_worker")).toEqual([]);
  });

  for (const scenario of scenarios) {
    it(scenario.op, async () => {
      const rest = await viaRest(h, scenario.op, await scenario.arrange(h, "rest"));
      const cli = await viaCli(h, scenario.op, await scenario.arrange(h, "cli"));
      expect(mask(cli)).toEqual(mask(rest));
      if (scenario.mcp !== false) {
        const mcp = await viaMcp(h, scenario.op, await scenario.arrange(h, "mcp"));
        expect(mask(mcp)).toEqual(mask(rest));
      }
    });
  }
});
