// Editable registrations (issue 17 item 4): register_job with replace: true updates a registration
// in place of a 409, on REST, MCP and the CLI: every field takes the request's value, the next fire
// is recomputed from the new schedule, and the runs made under the old one stay.

import { afterAll, beforeAll, expect, it } from "vitest";
import { nextFireTime } from "../src/engine/schedule.js";
import type { RegisteredJobView } from "../src/models/jobs.js";
import { forEachBackend } from "./support/backends.js";
import { entry, runAndWait, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("registered jobs: replace", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  it("refuses a second registration with 409 unless replace is true, which replaces every field and keeps the runs", async () => {
    const first = await h.http("POST", "/api/v0/registered-jobs", { entrypoint: entry("hello"), name: "editable", schedule: "0 6 * * *", defaults: { who: "ann" } });
    expect(first.status).toBe(201);
    const engine = await withEngine(h);
    try {
      expect((await runAndWait(h, "editable")).status).toBe("COMPLETED");
    } finally {
      await engine.stop();
    }

    const again = await h.http("POST", "/api/v0/registered-jobs", { entrypoint: entry("hello"), name: "editable", schedule: "0 7 * * *" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "name_taken", detail: expect.stringContaining("replace: true") });

    const before = Date.now();
    const replaced = await h.http("POST", "/api/v0/registered-jobs", {
      entrypoint: entry("typed"),
      name: "editable",
      schedule: "30 5 * * *",
      timezone: "Europe/Paris",
      defaults: { n: 3 },
      preservation_mode: "FULL",
      replace: true,
    });
    expect(replaced.status).toBe(201);
    const view = replaced.body as RegisteredJobView;
    expect(view).toMatchObject({ name: "editable", entrypoint: entry("typed"), schedule: "30 5 * * *", timezone: "Europe/Paris", defaults: { n: 3 }, preservation_mode: "FULL", enabled: true });
    expect(view.kwargs_schema).toMatchObject({ required: ["n"] });
    // The next fire follows the new schedule and zone (computed from about now).
    const expected = nextFireTime("30 5 * * *", "Europe/Paris", before)!;
    expect(Math.abs(Date.parse(view.next_run_at!) - expected)).toBeLessThan(60_000);
    const history = (await h.http("GET", "/api/v0/jobs?name=editable")).body as { items: { status: string }[] };
    expect(history.items.map((j) => j.status)).toEqual(["COMPLETED"]);

    // Omitted fields take their defaults: no schedule, enabled, no defaults.
    const plain = (await h.call("register_job", { entrypoint: entry("hello"), name: "editable", replace: true })) as RegisteredJobView;
    expect(plain).toMatchObject({ schedule: null, timezone: null, defaults: {}, enabled: true, next_run_at: null });
    const disabled = (await h.call("register_job", { entrypoint: entry("hello"), name: "editable", schedule: "0 6 * * *", enabled: false, replace: true })) as RegisteredJobView;
    expect(disabled).toMatchObject({ enabled: false, next_run_at: null });
  });

  it("replaces a name never registered like a first registration, and keeps concurrent replaces whole", async () => {
    const fresh = (await h.call("register_job", { entrypoint: entry("hello"), name: "replaced_fresh", replace: true })) as RegisteredJobView;
    expect(fresh.name).toBe("replaced_fresh");
    const zones = ["UTC", "Europe/Paris", "Asia/Tokyo", "America/New_York", "Australia/Sydney"];
    const results = await Promise.all(
      zones.map((zone, i) => h.http("POST", "/api/v0/registered-jobs", { entrypoint: entry("hello"), name: "raced", schedule: `${i} 4 * * *`, timezone: zone, replace: true })),
    );
    expect(results.map((r) => r.status)).toEqual(zones.map(() => 201));
    const final = (await h.http("GET", "/api/v0/registered-jobs?name=raced")).body as { items: RegisteredJobView[] };
    expect(final.items).toHaveLength(1);
    const winner = zones.indexOf(final.items[0]!.timezone!);
    expect(final.items[0]!.schedule).toBe(`${winner} 4 * * *`);
  });

  it("takes replace from MCP and the CLI", async () => {
    const client = await h.mcp();
    await client.callTool({ name: "register_job", arguments: { entrypoint: entry("hello"), name: "via_surfaces" } });
    const tool = await client.callTool({ name: "register_job", arguments: { entrypoint: entry("hello"), name: "via_surfaces", schedule: "15 3 * * *", replace: true } });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toMatchObject({ schedule: "15 3 * * *" });
    const cli = await h.cli("register-job", entry("hello"), "--name", "via_surfaces", "--schedule", "45 2 * * *", "--replace");
    expect(cli.code, cli.err).toBe(0);
    const view = (await h.http("GET", "/api/v0/registered-jobs?name=via_surfaces")).body as { items: RegisteredJobView[] };
    expect(view.items[0]!.schedule).toBe("45 2 * * *");
    // The help says "or null to run only on demand": `--schedule null` takes the schedule away.
    const unscheduled = await h.cli("register-job", entry("hello"), "--name", "via_surfaces", "--schedule", "null", "--replace");
    expect(unscheduled.code, unscheduled.err).toBe(0);
    const after = (await h.http("GET", "/api/v0/registered-jobs?name=via_surfaces")).body as { items: RegisteredJobView[] };
    expect(after.items[0]).toMatchObject({ schedule: null, next_run_at: null });
  });
});
