// Scheme A: SERVICE_API_TOKEN read on every request; /api/v0 and /mcp need it, docs and /health do not.

import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { forEachBackend } from "./support/backends.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("static token authentication", (backend) => {
  let h: Harness;
  const original = process.env.SERVICE_API_TOKEN;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterEach(() => {
    if (original === undefined) delete process.env.SERVICE_API_TOKEN;
    else process.env.SERVICE_API_TOKEN = original;
  });
  afterAll(() => h?.close());

  it("is open while no token is set", async () => {
    delete process.env.SERVICE_API_TOKEN;
    expect((await h.http("GET", "/api/v0/jobs")).status).toBe(200);
  });

  it("needs the bearer token once one is set, without a restart", async () => {
    process.env.SERVICE_API_TOKEN = "s3cret-token";
    const missing = await h.http("GET", "/api/v0/jobs");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    expect(missing.body).toMatchObject({ title: "Unauthorized", status: 401, code: "unauthorized" });
    const basic = await h.http("GET", "/api/v0/jobs", undefined, { authorization: "Basic YTpi" });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toBe("Bearer");
    const wrong = await h.http("GET", "/api/v0/jobs", undefined, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ code: "unauthorized" });
    const right = await h.http("GET", "/api/v0/jobs", undefined, { authorization: "Bearer s3cret-token" });
    expect(right.status).toBe(200);
  });

  it("guards /mcp at the mount and leaves health, docs and the web app open", async () => {
    process.env.SERVICE_API_TOKEN = "s3cret-token";
    const mcp = await h.http("POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "application/json, text/event-stream" });
    expect(mcp.status).toBe(401);
    for (const path of ["/health", "/api/v0/openapi.json", "/api/v0/docs", "/api/v0/redoc", "/", "/?p=jobs"]) {
      expect((await h.http("GET", path)).status, path).toBe(200);
    }
  });
});
