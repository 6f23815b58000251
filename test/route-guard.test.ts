// The guard lives on the routes (issue: token bypass by spelling). Every guarded route, REST and
// MCP, is sent in many spellings with no token, a wrong one and the right one: no spelling reaches
// a handler without the token, and no other spelling reaches a handler at all. Also the Host and
// Origin checks, probes with query strings, MCP GETs and non-object MCP arguments.

import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operations } from "../src/operations/index.js";
import { urlOf } from "../src/surfaces/rest/routes.js";
import { nonCanonicalPath } from "../src/surfaces/rest/request-guards.js";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

const TOKEN = "route-guard-token";
const MCP_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

interface Route {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
}

/** Every guarded route with sample values in its parameters, and the MCP mount. */
const guardedRoutes: Route[] = [
  ...operations
    .filter((op) => op.http && op.access !== "public")
    .map((op) => ({ method: op.http!.method, path: urlOf(op).replace(/\/:([A-Za-z_]+)/g, "/12345"), body: op.http!.method === "POST" || op.http!.method === "PUT" ? {} : undefined })),
  { method: "POST", path: "/mcp", body: MCP_LIST },
];

const hex = (c: string) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");

/** Other ways to write a path that a lenient router or a proxy might read as the same path. */
function spellings(path: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    out.add(path.slice(0, i) + hex(c) + path.slice(i + 1)); // every character percent-encoded, / included
    if (c !== "/") out.add(path.slice(0, i) + "%25" + hex(c).slice(1) + path.slice(i + 1)); // double encoding
  }
  const segments = path.split("/");
  out.add("/" + path); // //api/v0/…
  out.add(path.replace("/", "//"));
  out.add(segments.slice(0, 2).join("/") + "/./" + segments.slice(2).join("/"));
  out.add(segments.slice(0, 2).join("/") + "/x/../" + segments.slice(2).join("/"));
  out.add(segments.slice(0, 2).join("/") + "/%2e/" + segments.slice(2).join("/"));
  out.add(path + "/");
  out.add(path + "/.");
  out.add(path.toUpperCase());
  out.add(path.replace(/[a-z]/, (c) => c.toUpperCase()));
  out.add(path.replace(/\//g, "\\").replace(/^\\/, "/"));
  out.add(segments.slice(0, 2).join("/") + ";x=1/" + segments.slice(2).join("/"));
  out.add(path + ";x=1");
  out.delete(path);
  return [...out];
}

describe("canonical paths", () => {
  it("accepts our own routes and refuses other spellings", () => {
    for (const route of guardedRoutes) expect(nonCanonicalPath(route.path), route.path).toBeNull();
    expect(nonCanonicalPath("/api/v0/jobs?name=%61")).toBeNull(); // query strings are not paths
    expect(nonCanonicalPath("/%61pi/v0/jobs")).not.toBeNull();
    expect(nonCanonicalPath("/api/%760/jobs")).not.toBeNull();
    expect(nonCanonicalPath("//api/v0/jobs")).not.toBeNull();
    expect(nonCanonicalPath("/api/v0/../v0/jobs")).not.toBeNull();
    expect(nonCanonicalPath("/api/v0%2fjobs")).not.toBeNull();
    expect(nonCanonicalPath("/api/v0/%2561")).toMatch(/percent sign \(%25: double encoding\)/);
    expect(nonCanonicalPath("/%61pi/v0/jobs")).toMatch(/needs no encoding/);
    expect(nonCanonicalPath("/api/v0/registered-jobs/a%2Fb/enable")).toMatch(/encodes a separator \(%2F or %5C\) inside a segment/);
  });
});

forEachBackend("the route guard", (backend) => {
  let h: Harness;
  let base: URL;
  const original = process.env.SERVICE_API_TOKEN;
  beforeAll(async () => {
    h = await startHarness(backend);
    base = new URL(await h.listen());
    process.env.SERVICE_API_TOKEN = TOKEN;
  });
  afterAll(async () => {
    if (original === undefined) delete process.env.SERVICE_API_TOKEN;
    else process.env.SERVICE_API_TOKEN = original;
    await h?.close();
  });

  /** Over a real socket, the path exactly as written (fetch and inject would normalize it first). */
  const send = (route: Route, path: string, headers: Record<string, string> = {}) =>
    new Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const url = base;
      const payload = route.body !== undefined ? JSON.stringify(route.body) : undefined;
      const req = httpRequest(
        { host: url.hostname, port: url.port, method: route.method, path, agent: false, headers: { ...(payload ? MCP_HEADERS : {}), ...headers } },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("error", (error) => reject(new Error(`${route.method} ${path}: ${error.message}`)));
      req.end(payload);
    });

  it("asks every guarded route, REST and MCP, for the token", async () => {
    for (const route of guardedRoutes) {
      const none = await send(route, route.path);
      expect(none.statusCode, `${route.method} ${route.path}`).toBe(401);
      expect(none.headers["www-authenticate"]).toBe("Bearer");
      const wrong = await send(route, route.path, { authorization: "Bearer nope" });
      expect(wrong.statusCode, `${route.method} ${route.path}`).toBe(401);
      const right = await send(route, route.path, { authorization: `Bearer ${TOKEN}` });
      // Sample ids name nothing: 404/409/422 are fine, a 401 or 403 (SPEC: never under Scheme A) is not.
      expect([401, 403, 500], `${route.method} ${route.path}: ${right.body}`).not.toContain(right.statusCode);
    }
  });

  it("lets no other spelling of a guarded route reach a handler, with or without the token", async () => {
    let tried = 0;
    for (const route of guardedRoutes) {
      for (const path of spellings(route.path)) {
        for (const authorization of [undefined, "Bearer nope", `Bearer ${TOKEN}`]) {
          const response = await send(route, path, authorization ? { authorization } : {});
          tried += 1;
          const what = `${route.method} ${path} (${authorization ?? "no token"}): ${response.statusCode} ${response.body.slice(0, 120)}`;
          expect(response.statusCode, what).toBeGreaterThanOrEqual(400);
          expect(response.statusCode, what).toBeLessThan(500);
          // Without the right token the answer is 401 (the route's own guard), 404 (no route by that
          // name) or 400 (not an HTTP request target at all, refused by the HTTP parser).
          if (authorization !== `Bearer ${TOKEN}`) expect([400, 401, 404], what).toContain(response.statusCode);
          expect(response.body, what).not.toMatch(/"items"|"tools"/);
        }
      }
    }
    expect(tried).toBeGreaterThan(1000);
  });

  // SPEC Scheme A rule 3: every request to /api/v0/* and /mcp/* carries the token, routed or not.
  it("asks for the token before saying a path under /api/v0 or /mcp does not exist", async () => {
    const cases: [string, string, number][] = [
      ["GET", "/api/v0/no-such-route", 404],
      ["GET", "/api/v0", 404],
      ["PUT", "/api/v0/jobs", 405],
      ["GET", "/api/v0/jobs/123/cancel", 405],
      ["GET", "/mcp/anything", 404],
    ];
    for (const [method, url, routed] of cases) {
      const none = await h.app.inject({ method: method as "GET", url });
      expect(none.statusCode, `${method} ${url}`).toBe(401);
      expect(none.headers["www-authenticate"]).toBe("Bearer");
      expect(JSON.parse(none.body)).toMatchObject({ code: "unauthorized" });
      const right = await h.app.inject({ method: method as "GET", url, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(right.statusCode, `${method} ${url}`).toBe(routed);
    }
    // The open documents stay open all the way down: a missing asset is just missing.
    expect((await h.app.inject({ method: "GET", url: "/api/v0/docs/no-such-asset.js" })).statusCode).toBe(404);
  });

  it("keeps health, the documents and the web app open", async () => {
    for (const url of ["/health", "/health?probe=1&x", "/api/v0/openapi.json", "/api/v0/docs", "/api/v0/redoc", "/", "/?p=jobs"]) {
      expect((await h.app.inject({ method: "GET", url })).statusCode, url).toBe(200);
    }
  });

  it("answers API paths in another case with a Problem, not the web app", async () => {
    const response = await h.app.inject({ method: "GET", url: "/API/v0/jobs" });
    expect(response.statusCode).toBe(404);
    expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  describe("Host and Origin", () => {
    afterEach(() => {
      process.env.SERVICE_API_TOKEN = TOKEN;
    });

    it("answers loopback names only on a loopback server", async () => {
      delete process.env.SERVICE_API_TOKEN; // the open default server is what DNS rebinding targets
      for (const host of ["attacker.example", "attacker.example:5255", "127.0.0.1.nip.io", "localhost.attacker.example"]) {
        const response = await h.app.inject({ method: "GET", url: "/api/v0/jobs", headers: { host } });
        expect(response.statusCode, host).toBe(403);
        expect(JSON.parse(response.body)).toMatchObject({ code: "forbidden", detail: expect.stringMatching(/is not a name of this server/) });
      }
      for (const host of ["localhost", "localhost:5255", "127.0.0.1:5255", "127.1.2.3", "[::1]:5255", "app.localhost:80"]) {
        expect((await h.app.inject({ method: "GET", url: "/api/v0/jobs", headers: { host } })).statusCode, host).toBe(200);
      }
    });

    it("refuses a cross-site browser request to any mutating route", async () => {
      delete process.env.SERVICE_API_TOKEN;
      const host = "127.0.0.1:5255";
      const run = (origin?: string) =>
        h.app.inject({
          method: "POST",
          url: "/api/v0/jobs:run",
          headers: { host, "content-type": "application/json", ...(origin ? { origin } : {}) },
          payload: JSON.stringify({ name: "nope" }),
        });
      for (const origin of ["http://attacker.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1:5255", "file://"]) {
        const response = await run(origin);
        expect(response.statusCode, origin).toBe(403);
        expect(JSON.parse(response.body)).toMatchObject({ code: "forbidden", detail: expect.stringMatching(/only this server.s own pages/) });
      }
      const mcp = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, host, origin: "http://attacker.example" }, payload: JSON.stringify(MCP_LIST) });
      expect(mcp.statusCode).toBe(403);
      // The server's own pages and clients that send no Origin (CLI, curl, agents) are served.
      expect((await run(`http://${host}`)).statusCode).toBe(404);
      expect((await run()).statusCode).toBe(404);
      // Behind a TLS-terminating proxy (found by a security trial: every change from the web app
      // was refused): its page is https, and the proxy says so. The host must still be ours.
      const proxied = (origin: string) =>
        h.app.inject({ method: "POST", url: "/api/v0/jobs:run", headers: { host, origin, "x-forwarded-proto": "https", "content-type": "application/json" }, payload: JSON.stringify({ name: "nope" }) });
      expect((await proxied(`https://${host}`)).statusCode).toBe(404);
      expect((await proxied("https://attacker.example")).statusCode).toBe(403);
      expect((await proxied(`http://${host}`)).statusCode).toBe(403);
      // Reads stay readable from anywhere a Host allows (the API's own documents link them).
      expect((await h.app.inject({ method: "GET", url: "/api/v0/jobs", headers: { host, origin: "http://attacker.example" } })).statusCode).toBe(200);
    });
  });

  describe("MCP requests", () => {
    const auth = { authorization: `Bearer ${TOKEN}` };

    it("holds no idle event stream open: GET /mcp is 405, a Problem, and HEAD says the same", async () => {
      const response = await h.app.inject({ method: "GET", url: "/mcp", headers: { ...auth, accept: "text/event-stream" } });
      expect(response.statusCode).toBe(405);
      expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(response.body)).toMatchObject({ status: 405, code: "method_not_allowed" });
      // The SDK answered HEAD itself with Allow: GET, POST, DELETE, naming the GET just refused.
      const head = await h.app.inject({ method: "HEAD", url: "/mcp", headers: auth });
      expect(head.statusCode).toBe(405);
      expect(head.headers.allow).toBe("POST");
    });

    it("answers arguments that are not an object, and any other malformed call, with -32602", async () => {
      for (const args of [[1, 2], "text", 7, null]) {
        const call = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "list_jobs", arguments: args } };
        const response = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: JSON.stringify(call) });
        expect(JSON.parse(response.body), JSON.stringify(args)).toMatchObject({ id: 9, error: { code: -32602 } });
      }
      // A request that is malformed otherwise is the caller's mistake too, said in one line: the SDK
      // answered these with -32603 (an internal error) and its schema's raw report, or -32700.
      for (const params of [undefined, { name: 5 }, { name: "list_jobs", arguments: {}, _meta: 5 }]) {
        const call = { jsonrpc: "2.0", id: 11, method: "tools/call", ...(params === undefined ? {} : { params }) };
        const response = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: JSON.stringify(call) });
        const answer = JSON.parse(response.body) as { id: unknown; error: { code: number; message: string } };
        expect(answer, JSON.stringify(params)).toMatchObject({ id: 11, error: { code: -32602 } });
        expect(answer.error.message, JSON.stringify(params)).not.toMatch(/\n/);
      }
      // A body that is not JSON is a JSON-RPC parse error, like any other malformed message (it
      // was a REST Problem 422).
      const broken = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '{"jsonrpc":' });
      expect(broken.statusCode).toBe(400);
      expect(JSON.parse(broken.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      // Found by trying the product: arguments REST refuses with 422 were a parse error of valid
      // JSON (a prototype key), or were run changed (a number JSON.parse rounds or reads as 0: a
      // job's kwargs stored 18446744073709552000 and 0). A tool call gets REST's Problem as a tool
      // error, and runs nothing; another request -32602; a notification no answer.
      const jobsBefore = ((await h.http("GET", "/api/v0/jobs")).body as { total: number }).total;
      const refusedArguments: [string, string][] = [
        ['{"__proto__":{}}', 'request body: a key "__proto__", or "constructor" holding "prototype", is refused'],
        ['{"name":"x","kwargs":{"a":{"constructor":{"prototype":{"x":1}}}}}', 'a key "__proto__", or "constructor" holding "prototype", is refused'],
        ['{"name":"test/fixtures/jobs.ts:hello","kwargs":{"x":18446744073709551616}}', "the number 18446744073709551616 is an integer past 2^53"],
        ['{"name":"test/fixtures/jobs.ts:hello","kwargs":{"z":1e-400}}', "the number 1e-400 is too small for a JSON number here"],
      ];
      for (const [args, detail] of refusedArguments) {
        const payload = `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"run_job","arguments":${args}}}`;
        const refused = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload });
        expect(refused.statusCode, args).toBe(200);
        const answer = JSON.parse(refused.body) as { id: number; result: { isError: boolean; content: { text: string }[] } };
        expect(answer, args).toMatchObject({ jsonrpc: "2.0", id: 12, result: { isError: true } });
        expect(JSON.parse(answer.result.content[0]!.text), args).toMatchObject({ status: 422, code: "invalid", detail: expect.stringContaining(detail) });
      }
      expect(((await h.http("GET", "/api/v0/jobs")).body as { total: number }).total).toBe(jobsBefore);
      const listing = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":{"n":1e-400}}}' });
      expect(JSON.parse(listing.body)).toMatchObject({ id: 13, error: { code: -32602, message: expect.stringContaining("too small") } });
      const notified = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '{"jsonrpc":"2.0","method":"notifications/initialized","params":{"__proto__":{}}}' });
      expect([notified.statusCode, notified.body]).toEqual([202, ""]);
      // Found by review: a response in such a batch was answered, a rounded id was given back as
      // if it were the caller's, and text that is no JSON at all was called no JSON-RPC message.
      const responses = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '[{"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","method":"notifications/initialized","params":{"n":12345678901234567890}}]' });
      expect([responses.statusCode, responses.body]).toEqual([202, ""]);
      const roundedId = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}' });
      expect(JSON.parse(roundedId.body)).toMatchObject({ id: null, error: { code: -32602 } });
      const notJson = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":12345678901234567890}' });
      expect(notJson.statusCode).toBe(400);
      expect(JSON.parse(notJson.body)).toMatchObject({ id: null, error: { code: -32700 } });
      // Found by trying the product: a body /mcp cannot take (compressed, or not JSON) was a REST
      // Problem; the MCP server answers such a body as a JSON-RPC error with the HTTP status.
      const tools = '{"jsonrpc":"2.0","id":14,"method":"tools/list"}';
      for (const headers of [{ "content-encoding": "gzip" }, { "content-type": "text/plain" }]) {
        const refused = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth, ...headers }, payload: tools });
        expect(refused.statusCode, JSON.stringify(headers)).toBe(415);
        expect(JSON.parse(refused.body), JSON.stringify(headers)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringMatching(/^Unsupported Media Type: /) } });
      }
      // A method /mcp does not answer names the same methods as its GET's refusal.
      expect((await h.app.inject({ method: "PUT", url: "/mcp", headers: auth })).headers.allow).toBe("POST");
      // Stateless: no session to end, so DELETE is refused as the MCP transport spec allows (it was
      // a 200 with a JSON-RPC error, while Allow named DELETE).
      const ended = await h.app.inject({ method: "DELETE", url: "/mcp", headers: auth });
      expect(ended.statusCode).toBe(405);
      expect(ended.headers.allow).toBe("POST");
      expect(JSON.parse(ended.body)).toMatchObject({ code: "method_not_allowed" });
      // A tool this server does not have is a protocol error (-32602), as the MCP specification says.
      const unknownTool = { jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "no_such_tool", arguments: {} } };
      const unknown = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: JSON.stringify(unknownTool) });
      expect(JSON.parse(unknown.body)).toMatchObject({ id: 12, error: { code: -32602, message: 'Unknown tool: "no_such_tool"' } });
      const empty = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: "[]" });
      expect(JSON.parse(empty.body)).toMatchObject({ id: null, error: { code: -32600 } });
      const post = (payload: unknown) => h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: JSON.stringify(payload) });
      // JSON that is no request is -32600 (the SDK said -32700, "not JSON"); initialize without its
      // params is -32602 (it was -32603 with zod's raw report).
      for (const message of [null, 5, { id: 1, method: "tools/list" }, { jsonrpc: "2.0", id: 1.5, method: "tools/list" }, { jsonrpc: "2.0", id: null, method: "tools/list" }]) {
        expect(JSON.parse((await post(message)).body), JSON.stringify(message)).toMatchObject({ error: { code: -32600 } });
      }
      expect(JSON.parse((await post({ jsonrpc: "2.0", id: 3, method: "initialize" })).body)).toMatchObject({ id: 3, error: { code: -32602 } });
      // A notification is never answered, not even a malformed one.
      const notification = await post({ jsonrpc: "2.0", method: "tools/call" });
      expect(notification.statusCode).toBe(202);
      expect(notification.body).toBe("");
      // A batch with an invalid request runs none of it and answers every request: the valid one was
      // dropped without an answer (and not run).
      const before = ((await h.call("list_jobs", {})) as { total: number }).total;
      const batch = JSON.parse((await post([{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run_job", arguments: { name: "test/fixtures/jobs.ts:hello" } } }, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "nope" } }])).body) as { id: number; error: { code: number } }[];
      expect(batch.map((answer) => [answer.id, answer.error.code]).sort()).toEqual([[1, -32600], [2, -32602]]);
      expect(((await h.call("list_jobs", {})) as { total: number }).total).toBe(before);
      const fine = { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "list_jobs", arguments: {} } };
      const response = await h.app.inject({ method: "POST", url: "/mcp", headers: { ...MCP_HEADERS, ...auth }, payload: JSON.stringify(fine) });
      expect(JSON.parse(response.body)).toMatchObject({ id: 10, result: { structuredContent: { items: [] } } });
    });
  });

  it("routes every name registration accepts, the longest included", async () => {
    const name = "n".repeat(128);
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name });
    const response = await h.app.inject({ method: "POST", url: `/api/v0/registered-jobs/${name}/disable`, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode, response.body).toBe(200);
    const tooLong = await h.app.inject({
      method: "POST",
      url: "/api/v0/registered-jobs",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      payload: JSON.stringify({ entrypoint: "test/fixtures/jobs.ts:hello", name: "n".repeat(129) }),
    });
    expect(tooLong.statusCode).toBe(422);
  });
});
