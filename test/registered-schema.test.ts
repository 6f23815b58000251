// A registered job carries the JSON Schema of its kwargs (from the job's own zod schema, input side),
// so a client can build or check the arguments of a run without loading the module.

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { planRun, startRun } from "../src/engine/start-run.js";
import { findRegisteredJob } from "../src/store/registered-jobs.js";
import { forEachBackend } from "./support/backends.js";
import { entry } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("registered jobs' kwargs schema", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  it("is the job's schema as JSON Schema, on the view and in the list", async () => {
    const view = (await h.call("register_job", { entrypoint: entry("typed"), name: "typed_schema" })) as { kwargs_schema: Record<string, unknown> };
    expect(view.kwargs_schema).toMatchObject({
      type: "object",
      properties: { n: { type: "integer", minimum: 0 }, label: { type: "string" } },
      required: ["n"],
      // As a run enforces it (found by trying the product: the web app's editor, reading the
      // schema, called arguments with an unknown field fitting, and the run refused them).
      additionalProperties: false,
    });
    const run = await h.http("POST", "/api/v0/jobs:run", { name: "typed_schema", kwargs: { n: 1, zzz: 1 } });
    expect(run.body).toMatchObject({ status: 422, detail: "kwargs: unknown field(s) zzz; the job takes n, label" });
    const listed = await h.http("GET", "/api/v0/registered-jobs?name=typed_schema");
    expect((listed.body as { items: { kwargs_schema: unknown }[] }).items[0]!.kwargs_schema).toEqual(view.kwargs_schema);
  });

  it("is null for a job that declares no schema", async () => {
    const view = (await h.call("register_job", { entrypoint: entry("hello"), name: "hello_schema" })) as { kwargs_schema: unknown };
    expect(view.kwargs_schema).toBeNull();
  });

  it("describes defaults as optional input (what a caller sends)", async () => {
    const view = (await h.call("register_job", { entrypoint: "examples/primes.ts:countPrimes", name: "primes_schema" })) as { kwargs_schema: { required?: string[]; properties: Record<string, { default?: unknown }> } };
    expect(view.kwargs_schema.required ?? []).toEqual([]);
    expect(view.kwargs_schema.properties.limit).toMatchObject({ type: "integer", default: 200_000 });
  });
});

forEachBackend("registered jobs' kwargs schema after the job changed", (backend) => {
  let h: Harness;
  const folder = join("test", "fixtures", `schema-edit-${process.pid}-${backend.name}`);
  beforeAll(async () => {
    mkdirSync(folder, { recursive: true });
    h = await startHarness(backend);
  });
  afterAll(async () => {
    await h?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const module = (fields: string) =>
    `import { z } from "zod";\nimport { job } from "jobhouse";\n` + `export const grows = job("grows", async () => 1, { schema: z.object({ ${fields} }) });\n`;

  // Found by trying the product: a registration kept the schema of the code it was registered
  // with, so the web app's editor refused a field the job had since gained.
  it("is the schema of the code a run of it started with", async () => {
    writeFileSync(join(folder, "grows.ts"), module("n: z.number()"));
    const view = (await h.call("register_job", { entrypoint: `${folder}/grows.ts:grows`, name: "grows" })) as { kwargs_schema: { properties: object } };
    expect(Object.keys(view.kwargs_schema.properties)).toEqual(["n"]);
    writeFileSync(join(folder, "grows.ts"), module("n: z.number(), m: z.string().optional()"));
    await h.call("run_job", { name: "grows", kwargs: { n: 1, m: "x" } });
    const after = (await h.call("list_registered_jobs", { name: "grows" })) as { items: { kwargs_schema: { properties: object } }[] };
    expect(Object.keys(after.items[0]!.kwargs_schema.properties)).toEqual(["n", "m"]);
  });

  // Found by review: a run planned before a re-registration overwrote its newer schema.
  it("leaves a registration made while a run was being planned as it is", async () => {
    writeFileSync(join(folder, "grows.ts"), module("n: z.number()"));
    await h.call("register_job", { entrypoint: `${folder}/grows.ts:grows`, name: "grows_race", replace: true });
    writeFileSync(join(folder, "grows.ts"), module("n: z.number(), m: z.string().optional()"));
    const registered = (await findRegisteredJob(h.service.db, "grows_race"))!;
    const plan = await planRun(h.service.jobs, h.service.config, { registered, runType: "MANUAL", kwargs: { n: 1 } });
    writeFileSync(join(folder, "grows.ts"), module("n: z.number(), m: z.string().optional(), k: z.boolean().optional()"));
    await h.call("register_job", { entrypoint: `${folder}/grows.ts:grows`, name: "grows_race", replace: true });
    await startRun(h.service.db, h.service.ids, h.service.clock, h.service.config, plan);
    const stored = (await h.call("list_registered_jobs", { name: "grows_race" })) as { items: { kwargs_schema: { properties: object } }[] };
    expect(Object.keys(stored.items[0]!.kwargs_schema.properties)).toEqual(["n", "m", "k"]);
  });
});
