// Problem bodies and statuses for not found, conflict and invalid input: never a 500.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachBackend } from "./support/backends.js";
import { type Harness, type HttpResult, startHarness } from "./support/harness.js";

/** JSON text of an array nested `levels` deep, [[[…]]] (built as text: JSON.stringify itself overflows). */
const deep = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);

function expectProblem(result: HttpResult, status: number, code: string) {
  expect(result.status, result.text).toBe(status);
  expect(result.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(result.body).toEqual({ title: expect.any(String), status, detail: expect.any(String), code });
}

forEachBackend("Problems", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "known" });
  });
  afterAll(() => h?.close());

  describe("not found (404 not_found)", () => {
    const cases: [string, string][] = [
      ["GET", "/api/v0/jobs/123456789"],
      ["GET", "/api/v0/jobs/no-such-job"],
      ["GET", "/api/v0/jobs/123456789/stats"],
      ["POST", "/api/v0/jobs/123456789/cancel"],
      ["GET", "/api/v0/tasks/42"],
      ["GET", "/api/v0/tasks/42/logs"],
      ["POST", "/api/v0/workers/42/stop"],
      ["POST", "/api/v0/registered-jobs/nope/enable"],
      ["GET", "/api/v0/objects/nope"],
      ["DELETE", "/api/v0/objects/nope"],
      ["GET", "/api/v0/no-such-route"],
      // Found by trying the product: an empty path parameter was 422 "ref: Too small".
      ["GET", "/api/v0/jobs/"],
      ["GET", "/api/v0/tasks/"],
      ["DELETE", "/api/v0/objects/"],
      ["POST", "/api/v0/workers//stop"],
    ];
    for (const [method, path] of cases) it(`${method} ${path}`, async () => expectProblem(await h.http(method, path), 404, "not_found"));

    // CONTRACT §4: an all-digit ref is an id, even one past int64 (it said 'no job is named "…"').
    it("a job ref of 20 digits is an id that does not exist", async () => {
      const answer = await h.http("GET", "/api/v0/jobs/99999999999999999999");
      expectProblem(answer, 404, "not_found");
      expect((answer.body as { detail: string }).detail).toBe("job 99999999999999999999 does not exist");
    });

    it("run_job of an unknown registered name", async () => {
      expectProblem(await h.http("POST", "/api/v0/jobs:run", { name: "never-registered" }), 404, "not_found");
    });
  });

  describe("conflict (409)", () => {
    it("cancel of a terminal job is job_terminal", async () => {
      const job = (await h.call("run_job", { name: "known" })) as { id: string };
      expect((await h.http("POST", `/api/v0/jobs/${job.id}/cancel`)).status).toBe(200);
      expectProblem(await h.http("POST", `/api/v0/jobs/${job.id}/cancel`), 409, "job_terminal");
    });

    it("registering a taken name is name_taken", async () => {
      expectProblem(await h.http("POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", name: "known" }), 409, "name_taken");
    });

    it("only one of two racing cancels wins", async () => {
      const job = (await h.call("run_job", { name: "known" })) as { id: string };
      const results = await Promise.all(Array.from({ length: 6 }, () => h.http("POST", `/api/v0/jobs/${job.id}/cancel`)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    });

    it("only one of two racing registrations wins", async () => {
      const body = { entrypoint: "test/fixtures/jobs.ts:hello", name: "raced" };
      const results = await Promise.all(Array.from({ length: 4 }, () => h.http("POST", "/api/v0/registered-jobs", body)));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    });
  });

  describe("invalid input (422 invalid)", () => {
    const cases: [string, string, string, unknown?][] = [
      ["negative limit", "GET", "/api/v0/jobs?limit=-1"],
      ["zero limit", "GET", "/api/v0/jobs?limit=0"],
      ["huge limit", "GET", "/api/v0/jobs?limit=501"],
      ["absurd limit", "GET", "/api/v0/jobs?limit=99999999999999999999999"],
      ["non-numeric limit", "GET", "/api/v0/jobs?limit=ten"],
      ["fractional limit", "GET", "/api/v0/jobs?limit=2.5"],
      ["unknown status enum", "GET", "/api/v0/jobs?status=DONE"],
      ["lowercase status enum", "GET", "/api/v0/jobs?status=pending"],
      ["malformed cursor", "GET", "/api/v0/jobs?cursor=%%%"],
      ["cursor beyond 64 bits", "GET", "/api/v0/jobs?cursor=OTk5OTk5OTk5OTk5OTk5OTk5OQ"],
      ["worker cursor beyond 64 bits", "GET", "/api/v0/workers?cursor=OTk5OTk5OTk5OTk5OTk5OTk5OQ"],
      ["object cursor beyond 64 bits", "GET", "/api/v0/objects?cursor=OTk5OTk5OTk5OTk5OTk5OTk5OQ"],
      ["impossible calendar date", "GET", "/api/v0/jobs?since=2026-02-30T00:00:00Z"],
      ["object name that cannot exist", "GET", "/api/v0/objects/bad-name"],
      ["delete of a name that cannot exist", "DELETE", "/api/v0/objects/x;y"],
      ["kwargs nested 5000 deep", "POST", "/api/v0/jobs:run", `{"name":"known","kwargs":{"x":${deep(5000)}}}`],
      ["kwargs nested 65 deep", "POST", "/api/v0/jobs:run", `{"name":"known","kwargs":{"x":${deep(65)}}}`],
      ["defaults nested 5000 deep", "POST", "/api/v0/registered-jobs", `{"entrypoint":"test/fixtures/jobs.ts:hello","name":"deep","defaults":{"x":${deep(5000)}}}`],
      ["a schedule that never fires", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", name: "never", schedule: "0 0 30 2 *" }],
      ["an all-digit registered name", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", name: "123" }],
      ["cursor of garbage", "GET", "/api/v0/jobs?cursor=bm90LWFuLWlk"],
      // Registered jobs page by name: a key no name can have ("not a name", stray bytes) is no cursor either.
      ["registered-job cursor of garbage", "GET", "/api/v0/registered-jobs?cursor=bm90IGEgbmFtZQ"],
      ["registered-job cursor of stray bytes", "GET", "/api/v0/registered-jobs?cursor=abc"],
      ["bad since", "GET", "/api/v0/jobs?since=yesterday"],
      ["unknown query field", "GET", "/api/v0/jobs?colour=red"],
      // Found by trying the product: a POST's query was ignored (this ran the body's name), and
      // integers were read from " 5", "10.0" and "1e2".
      ["a query on a POST", "POST", "/api/v0/jobs:run?name=other", { name: "known" }],
      ["an integer with a space", "GET", "/api/v0/jobs?limit=%205"],
      ["an integer with a fraction", "GET", "/api/v0/jobs?limit=10.0"],
      ["an integer with an exponent", "GET", "/api/v0/jobs?limit=1e2"],
      ["an integer with a sign", "GET", "/api/v0/jobs?limit=%2B1"],
      ["repeated query field", "GET", "/api/v0/jobs?limit=1&limit=2"],
      // A field named like the prototype is unknown like any other: it was dropped (200) before.
      ["query field named __proto__", "GET", "/api/v0/jobs?__proto__=a"],
      ["query field named __proto__, repeated", "GET", "/api/v0/jobs?__proto__=a&__proto__=b"],
      ["bad worker status", "GET", "/api/v0/workers?status=BUSY"],
      ["bad enabled flag", "GET", "/api/v0/registered-jobs?enabled=maybe"],
      ["bad object scope", "GET", "/api/v0/objects?scope=forever"],
      ["task id not a number", "GET", "/api/v0/tasks/abc"],
      ["task id too large", "GET", "/api/v0/tasks/99999999999999999999"],
      ["task id with leading zeros", "GET", "/api/v0/tasks/00912967546894630912"],
      ["job ref with leading zeros", "GET", "/api/v0/jobs/007"],
      ["job ref with leading zeros, stats", "GET", "/api/v0/jobs/007/stats"],
      ["worker id not a number", "POST", "/api/v0/workers/x/stop"],
      ["log of attempt 0 (attempts count from 1)", "GET", "/api/v0/tasks/42/logs?attempt=0"],
      ["run_job without name", "POST", "/api/v0/jobs:run", {}],
      ["run_job name of wrong type", "POST", "/api/v0/jobs:run", { name: 5 }],
      ["run_job kwargs not an object", "POST", "/api/v0/jobs:run", { name: "known", kwargs: [1, 2] }],
      // JSON.parse reads 1e400 as Infinity, which JSON cannot hold: it was stored, and run, as null.
      ["run_job kwargs with a number too large for JSON", "POST", "/api/v0/jobs:run", '{"name":"known","kwargs":{"n":1e400}}'],
      ["run_job kwargs with a number too large for JSON, nested", "POST", "/api/v0/jobs:run", '{"name":"known","kwargs":{"a":{"b":[1,-1e999]}}}'],
      ["register_job defaults with a number too large for JSON", "POST", "/api/v0/registered-jobs", '{"entrypoint":"test/fixtures/jobs.ts:hello","name":"huge","defaults":{"n":1e400}}'],
      // JSON.parse rounds integers past 2^53 in silence: 9007199254740993 was stored as …992.
      ["run_job kwargs with an integer past 2^53", "POST", "/api/v0/jobs:run", '{"name":"known","kwargs":{"id":9007199254740993}}'],
      // JSON.parse reads 1e-400 as 0: it was stored, and run, as 0.
      ["run_job kwargs with a number too small for JSON", "POST", "/api/v0/jobs:run", '{"name":"known","kwargs":{"x":1e-400}}'],
      ["register_job defaults with an integer past 2^53", "POST", "/api/v0/registered-jobs", '{"entrypoint":"test/fixtures/jobs.ts:hello","name":"exact","defaults":{"n":[-12345678901234567890]}}'],
      ["run_job unknown preservation mode", "POST", "/api/v0/jobs:run", { name: "known", preservation_mode: "SOME" }],
      ["run_job unknown field", "POST", "/api/v0/jobs:run", { name: "known", prority: 1 }],
      ["run_job malformed entrypoint", "POST", "/api/v0/jobs:run", { name: "jobs/p.ts:" }],
      // Refused by the confinement rules: still Invalid, so still code `invalid` (SPEC Errors).
      ["run_job of a builtin module", "POST", "/api/v0/jobs:run", { name: "node:fs:readFileSync" }],
      ["register_job of a file outside the job roots", "POST", "/api/v0/registered-jobs", { entrypoint: "/etc/passwd:x" }],
      ["body is an array", "POST", "/api/v0/jobs:run", [1]],
      ["body is not JSON", "POST", "/api/v0/jobs:run", "{name:"],
      ["empty JSON body", "POST", "/api/v0/jobs:run", ""],
      ["register without entrypoint", "POST", "/api/v0/registered-jobs", { schedule: "* * * * *" }],
      ["register with bad cron", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", schedule: "every day" }],
      ["register with 6-field cron", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", schedule: "0 * * * * *" }],
      ["register with out-of-range cron", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", schedule: "61 * * * *" }],
      ["register with overlap skip and no max_active_runs", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", overlap: "skip" }],
      ["register with unknown timezone", "POST", "/api/v0/registered-jobs", { entrypoint: "test/fixtures/jobs.ts:hello", schedule: "0 1 * * *", timezone: "Mars/Olympus" }],
      ["purge with an empty filter", "POST", "/api/v0/objects:purge", {}],
      ["purge with a bad bound", "POST", "/api/v0/objects:purge", { before: "soon" }],
    ];
    for (const [title, method, path, body] of cases) {
      it(title, async () => expectProblem(await h.http(method, path, body), 422, "invalid"));
    }
    it("says an integer in a query is written in digits", async () => {
      const answer = await h.http("GET", "/api/v0/jobs?limit=10.0");
      expect((answer.body as { detail: string }).detail).toBe('limit: must be a whole number written in digits, got "10.0"');
    });

    it("names the offending field", async () => {
      const result = await h.http("GET", "/api/v0/jobs?limit=501");
      expect((result.body as { detail: string }).detail).toMatch(/^limit: /);
      // Twenty digits are digits: what is wrong is the range.
      expect(((await h.http("GET", "/api/v0/tasks/99999999999999999999")).body as { detail: string }).detail).toBe("id: id is out of range");
      expect(((await h.http("GET", "/api/v0/tasks/00912967546894630912")).body as { detail: string }).detail).toBe("id: an id is written without leading zeros");
      expect(((await h.http("GET", "/api/v0/jobs/007")).body as { detail: string }).detail).toBe("ref: an id is written without leading zeros");
      const huge = await h.http("POST", "/api/v0/jobs:run", '{"name":"known","kwargs":{"a":{"b":[1,-1e999]}}}');
      expect((huge.body as { detail: string }).detail).toMatch(/^kwargs\.a\.b\.1: is a number too large for JSON/);
      // Valid JSON refused for a key that could reach a prototype was "Body is not valid JSON".
      for (const body of ['{"name":"known","kwargs":{"__proto__":{"x":1}}}', '{"name":"known","kwargs":{"constructor":{"prototype":{}}}}']) {
        const refused = await h.http("POST", "/api/v0/jobs:run", body);
        expect(refused.status, body).toBe(422);
        expect((refused.body as { detail: string }).detail).toBe('request body: a key "__proto__", or "constructor" holding "prototype", is refused (it could reach an object\'s prototype)');
      }
      expect(((await h.http("POST", "/api/v0/jobs:run", "{name:")).body as { detail: string }).detail).toMatch(/^request body: Body is not valid JSON/);
      // One reason per field: a number past both an int's range and the field's maximum said both.
      expect(((await h.http("POST", "/api/v0/workers", '{"max_tasks":1e20}')).body as { detail: string }).detail).toMatch(/^max_tasks: Too big: expected [a-z]+ to be <=\d+$/);
    });

    // An MCP client that leaves out a RefId read zod's "ref: Invalid input", which names no cause.
    it("says a left-out field is required, a RefId included", async () => {
      const mcp = await h.mcp();
      for (const name of ["get_job", "job_stats", "cancel_job"]) {
        const result = await mcp.callTool({ name, arguments: {} });
        expect(result.isError, name).toBe(true);
        expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toMatchObject({ status: 422, code: "invalid", detail: "ref: required" });
      }
      const rest = await h.http("POST", "/api/v0/registered-jobs", {});
      expect((rest.body as { detail: string }).detail).toBe("entrypoint: required");
    });

    it(`start_worker in ${backend.name} mode`, async () => {
      const result = await h.http("POST", "/api/v0/workers", {});
      if (backend.name === "local") expectProblem(result, 422, "invalid");
      else expect(result.status).toBe(202);
      // A count past the column (32 bits) was accepted, and the spawned worker failed and hung.
      expectProblem(await h.http("POST", "/api/v0/workers", { max_tasks: 2_147_483_648 }), 422, "invalid");
    });
  });

  // Clients generated from the spec's models send unset optional fields as null (a pydantic
  // model's dump, an MCP agent filling every property): null means "not given", never a 422.
  describe("null for an optional field means not given", () => {
    it("run_job over REST with preservation_mode and kwargs null", async () => {
      const result = await h.http("POST", "/api/v0/jobs:run", { name: "known", kwargs: null, preservation_mode: null });
      expect(result.status, result.text).toBe(201);
      expect(result.body).toMatchObject({ name: "known", preservation_mode: "NONE" });
    });

    it("list filters and purge over MCP with their unset fields null", async () => {
      const mcp = await h.mcp();
      const jobs = await mcp.callTool({ name: "list_jobs", arguments: { status: null, name: "known", since: null, limit: null, cursor: null } });
      expect(jobs.isError, JSON.stringify(jobs)).toBeFalsy();
      expect(jobs.structuredContent).toMatchObject({ items: expect.any(Array), next_cursor: null });
      const registered = await mcp.callTool({ name: "register_job", arguments: { entrypoint: "test/fixtures/jobs.ts:hello", name: "nullish", defaults: null, enabled: null, schedule: null } });
      expect(registered.structuredContent).toMatchObject({ name: "nullish", defaults: {}, enabled: true, schedule: null });
      // Null is no filter: an otherwise empty purge is still refused.
      const purge = await mcp.callTool({ name: "purge_objects", arguments: { prefix: null, scope: null } });
      expect(purge.isError).toBe(true);
      expect(JSON.stringify(purge.content)).toMatch(/invalid/);
    });

    it("a required field stays required", async () => {
      expectProblem(await h.http("POST", "/api/v0/jobs:run", { name: null }), 422, "invalid");
      expectProblem(await h.http("POST", "/api/v0/registered-jobs", { entrypoint: null }), 422, "invalid");
    });
  });

  it("accepts kwargs nested as deep as the limit allows", async () => {
    expect((await h.http("POST", "/api/v0/jobs:run", `{"name":"known","kwargs":{"x":${deep(62)}}}`)).status).toBe(201);
  });

  it("an oversized body is 413, not a 500", async () => {
    const result = await h.http("POST", "/api/v0/jobs:run", { name: "known", kwargs: { blob: "x".repeat(11 * 1024 * 1024) } });
    expectProblem(result, 413, "payload_too_large");
  });

  it("an empty body sent as JSON is no body: routes that take none answer, run_job still asks for a name", async () => {
    const json = { "content-type": "application/json" };
    const job = (await h.call("run_job", { name: "known" })) as { id: string };
    const cancel = await h.http("POST", `/api/v0/jobs/${job.id}/cancel`, "", json);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body).toMatchObject({ id: job.id, status: "CANCELLED" });
    expect((await h.http("POST", "/api/v0/registered-jobs/known/disable", " ", json)).body).toMatchObject({ name: "known", enabled: false });
    expect((await h.http("POST", "/api/v0/registered-jobs/known/enable", "", json)).body).toMatchObject({ name: "known", enabled: true });
    const run = await h.http("POST", "/api/v0/jobs:run", "", json);
    expectProblem(run, 422, "invalid");
    expect((run.body as { detail: string }).detail).toMatch(/^name: required/);
  });

  it("a wrong content type is 415", async () => {
    const form = await h.http("POST", "/api/v0/jobs:run", "name=known", { "content-type": "application/x-www-form-urlencoded" });
    expectProblem(form, 415, "unsupported_media_type");
    // It says what to send (curl -d sends a form): it only repeated its title before.
    expect((form.body as { detail: string }).detail).toMatch(/Content-Type: application\/json/);
    // JSON sent as text/plain was read as a string and refused as "must be a JSON object" (422).
    expectProblem(await h.http("POST", "/api/v0/jobs:run", '{"name":"known"}', { "content-type": "text/plain" }), 415, "unsupported_media_type");
    // Found by trying the product: a body said to be gzip-compressed was read as plain JSON.
    const gzip = await h.http("POST", "/api/v0/jobs:run", '{"name":"known"}', { "content-type": "application/json", "content-encoding": "gzip" });
    expectProblem(gzip, 415, "unsupported_media_type");
    expect((gzip.body as { detail: string }).detail).toBe('Content-Encoding "gzip" is not accepted: send the JSON body uncompressed');
    expect((await h.http("POST", "/api/v0/jobs:run", '{"name":"never-registered"}', { "content-type": "application/json", "content-encoding": "identity" })).status).toBe(404);
    // Documented for every operation that takes a body, with 413 (the document left both out).
    const document = (await h.http("GET", "/api/v0/openapi.json")).body as { paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> };
    const withBody = Object.values(document.paths).flatMap((methods) => Object.values(methods)).filter((op) => op.requestBody);
    expect(withBody.length).toBeGreaterThan(5);
    for (const op of withBody) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["413", "415"]));
  });

  // Found by trying the product: past 2^53 the detail named zod's bound (9007199254740991), not the limit's.
  it("a query integer past 2^53 is refused with the field's own bound", async () => {
    const huge = await h.http("GET", "/api/v0/jobs?limit=1000000000000000000000000000000");
    expectProblem(huge, 422, "invalid");
    expect((huge.body as { detail: string }).detail).toBe("limit: Too big: expected number to be <=500");
    expect((huge.body as { detail: string }).detail).toBe(((await h.http("GET", "/api/v0/jobs?limit=501")).body as { detail: string }).detail);
  });

  // Found by trying the product: bytes that are not UTF-8 became U+FFFD and were stored in kwargs.
  it("a body that is not UTF-8 is refused, and so is one declared in another charset", async () => {
    const latin1 = Buffer.concat([Buffer.from('{"name":"never-registered","kwargs":{"s":"z'), Buffer.from([0xe9]), Buffer.from('z"}}')]);
    const send = (url: string, contentType: string, payload: Buffer) => h.app.inject({ method: "POST", url, headers: { "content-type": contentType, accept: "application/json, text/event-stream" }, payload });
    const bad = await send("/api/v0/jobs:run", "application/json", latin1);
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: "invalid", detail: "request body: the body is not valid UTF-8 (JSON must be sent as UTF-8)" });
    const declared = await send("/api/v0/jobs:run", "application/json; charset=iso-8859-1", latin1);
    expect(declared.statusCode).toBe(415);
    expect(declared.json()).toMatchObject({ code: "unsupported_media_type", detail: 'charset "iso-8859-1" is not accepted: send the JSON body as UTF-8' });
    // UTF-8, declared or not, in any spelling, is read as before.
    const utf8 = Buffer.from('{"name":"never-registered","kwargs":{"s":"zéz"}}');
    for (const type of ["application/json", "application/json; charset=UTF-8", 'application/json;charset="utf8"', "application/json; charset=us-ascii", "application/json; charset="]) {
      expect((await send("/api/v0/jobs:run", type, utf8)).statusCode, type).toBe(404);
    }
    // No bytes, no charset to get wrong (found by a review: a cancel with such a header was 415).
    expect((await send("/api/v0/jobs/1/cancel", "application/json; charset=iso-8859-1", Buffer.alloc(0))).statusCode).toBe(404);
    const mcp = await send("/mcp", "application/json", Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"'), Buffer.from([0xff]), Buffer.from('"}}')]));
    expect(mcp.statusCode).toBe(400);
    expect(mcp.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("the router's own refusals are Problems: a path segment too long (414), a malformed URL (400)", async () => {
    expectProblem(await h.http("GET", `/api/v0/jobs/${"9".repeat(600)}`), 414, "uri_too_long");
    expectProblem(await h.http("GET", "/api/v0/jobs/%E0%A4%A"), 400, "bad_url");
  });

  it("a path that exists under other methods is 405 with Allow, one that does not is 404", async () => {
    const put = await h.http("PUT", "/api/v0/jobs");
    expectProblem(put, 405, "method_not_allowed");
    expect(put.headers.get("allow")).toBe("GET, HEAD");
    const cancel = await h.http("GET", "/api/v0/jobs/123/cancel");
    expectProblem(cancel, 405, "method_not_allowed");
    expect(cancel.headers.get("allow")).toBe("POST");
    expect((await h.http("PATCH", "/health")).headers.get("allow")).toBe("GET, HEAD");
    // A literal colon in a path (`jobs:run`) is matched as written.
    expect((await h.http("GET", "/api/v0/jobs:run")).headers.get("allow")).toBe("POST");
    expectProblem(await h.http("PUT", "/api/v0/nothing-here"), 404, "not_found");
  });
});
