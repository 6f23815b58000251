// Lineage through cleanup (issue 13), on both backends: an ETL of orders from a CSV (filter, join a
// global customers object, select, group by) in NONE mode drops every intermediate, yet the result
// still names the CSV and customers as its sources and each column's origin; the dropped temps stay
// in the graph, marked, with their SQL; a chain and its step-by-step form give the same sources; a
// replaced object's old version keeps its history; the walk is bounded.

import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineRuntime } from "../src/app/engine-runtime.js";
import type { ObjectDetail } from "../src/models/objects.js";
import { recordOperation } from "../src/store/object-lineage.js";
import { walkUpstream } from "../src/store/lineage-walk.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

const JOBS = "test/fixtures/lineage-jobs.ts";

forEachBackend("lineage through cleanup", (backend) => {
  let h: Harness;
  let engine: EngineRuntime;
  let dir: string;
  let ordersCsv: string;
  beforeAll(async () => {
    h = await startHarness(backend);
    engine = await withEngine(h);
    dir = mkdtempSync(join(tmpdir(), "jobhouse-lineage-"));
    ordersCsv = join(dir, "orders.csv");
    const orders = ["order_id,customer_id,amount,ordered_at"];
    for (let i = 1; i <= 2_000; i++) orders.push(`${i},${(i % 40) + 1},${i % 7 === 0 ? -5 : (i % 97) + 1},2026-0${(i % 3) + 1}-1${i % 9} 10:00:00`);
    writeFileSync(ordersCsv, orders.join("\n") + "\n");
    const customersCsv = join(dir, "customers.csv");
    writeFileSync(customersCsv, ["customer_id,country", ...Array.from({ length: 40 }, (_, i) => `${i + 1},${["FR", "DE", "JP", "BR"][i % 4]}`)].join("\n") + "\n");
    expect((await runAndWait(h, `${JOBS}:loadGlobal`, { path: customersCsv, name: "customers" })).status).toBe("COMPLETED");
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const detail = async (name: string) => {
    const response = await h.http("GET", `/api/v0/objects/${name}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as ObjectDetail;
  };
  const sourceNames = (o: ObjectDetail) => o.lineage_summary.sources.map((s) => `${s.kind}:${s.kind === "object" ? s.name : s.name}`);

  it("keeps the CSV as the ETL result's source, and its columns' origins, after the temps are dropped", async () => {
    const job = await runAndWait(h, `${JOBS}:ordersEtl`, { path: ordersCsv, name: "monthly_revenue" });
    expect(job.status, job.error ?? "").toBe("COMPLETED");
    const revenue = await detail("monthly_revenue");
    // Every intermediate was a temp, and is gone.
    const objects = revenue.lineage_summary.graph.nodes.filter((n) => n.kind === "object" && n.key !== revenue.lineage_summary.graph.root);
    const dropped = objects.filter((n) => !n.exists);
    expect(dropped.map((n) => n.operation).sort()).toEqual(["filter", "join", "load", "select"]);
    for (const n of dropped) {
      expect(n).toMatchObject({ scope: "temp", exists: false });
      expect(n.table).toMatch(/^t_\d+$/);
      expect(n.dropped_at).not.toBeNull();
      expect(n.sql).toMatch(n.operation === "load" ? /^INSERT INTO t_\d+ FORMAT CSVWithNames FROM / : /CREATE TABLE/);
    }
    // The sources: the CSV (path, size, load time) and the existing customers object.
    expect(sourceNames(revenue)).toEqual([`file:${ordersCsv}`, "object:customers"]);
    const csv = revenue.lineage_summary.sources[0]!;
    expect(csv).toMatchObject({ kind: "file", format: "csv", size_bytes: statSync(ordersCsv).size, exists: true });
    expect(Date.parse(csv.loaded_at!)).toBeGreaterThan(Date.parse(job.created_at));
    const customers = revenue.lineage_summary.sources[1]!;
    expect(customers).toMatchObject({ kind: "object", scope: "global", table: "p_customers", exists: true });
    // Each column names the CSV's (or customers') column it came from.
    const origin = (column: string) => revenue.lineage_summary.column_sources[column]!.map((o) => `${o.kind}:${o.name}.${o.column}`).sort();
    expect(origin("revenue")).toEqual([`file:${ordersCsv}.amount`]);
    expect(origin("month")).toEqual([`file:${ordersCsv}.ordered_at`]);
    expect(origin("country")).toEqual(["object:customers.country"]);
    // The direct upstream is still the dropped select (exactly, marked).
    expect(revenue.lineage_summary.upstream_objects).toHaveLength(1);
    expect(revenue.lineage_summary.upstream_objects[0]!.exists).toBe(false);
    // It keeps its table, scope and job, as its node in the graph does (they were null before).
    const direct = revenue.lineage_summary.upstream_objects[0]!;
    const node = revenue.lineage_summary.graph.nodes.find((n) => n.id === direct.id)!;
    expect(direct).toMatchObject({ table: node.table, scope: node.scope, job_id: node.job_id });
    expect(direct.table).not.toBeNull();
    // The graph's edges lead from the CSV, through the dropped temps, to the result.
    const { edges, root } = revenue.lineage_summary.graph;
    const reached = new Set([root]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const e of edges) if (reached.has(e.to) && !reached.has(e.from)) grew = reached.add(e.from) !== undefined;
    }
    expect(reached).toContain(`file:${ordersCsv}`);
    expect(reached.size).toBe(revenue.lineage_summary.graph.nodes.length);
  });

  it("draws the upstream as a tree in the terminal, and leaves --json the REST model", async () => {
    const cli = await h.cli("data", "get", "monthly_revenue");
    expect(cli.code, cli.err).toBe(0);
    const tree = cli.out.slice(cli.out.indexOf("upstream:"));
    const lines = tree.split("\n");
    expect(lines[1]).toMatch(/^ {2}monthly_revenue \[p_monthly_revenue\] \(global, group_by\)$/);
    expect(tree).toMatch(/^ {2}└── t_\d+ \(temp, select, dropped\)$/m);
    expect(tree).toMatch(/^ {6}└── t_\d+ \(temp, join, dropped\)$/m);
    // The join's two inputs, one drawn with ├── and the other with └──.
    expect(tree).toMatch(/^ {10}[├└]── t_\d+ \(temp, filter, dropped\)$/m);
    expect(tree).toMatch(/^ {10}[├└]── customers \[p_customers\] \(global, load\)$/m);
    expect(tree).toContain(`└── file ${ordersCsv} (csv, `);
    expect(cli.out).toContain(`revenue ← ${ordersCsv}: amount`);
    expect(cli.out).toContain("country ← customers: country");
    const json = await h.cli("data", "get", "monthly_revenue", "--output", "json");
    expect(JSON.parse(json.out)).toEqual(await detail("monthly_revenue"));
  });

  it("gives a chain the same sources and column origins as its step-by-step form", async () => {
    expect((await runAndWait(h, `${JOBS}:ordersEtl`, { path: ordersCsv, name: "revenue_steps" })).status).toBe("COMPLETED");
    expect((await runAndWait(h, `${JOBS}:ordersEtl`, { path: ordersCsv, name: "revenue_chain", chain: true })).status).toBe("COMPLETED");
    const [steps, chain] = [await detail("revenue_steps"), await detail("revenue_chain")];
    expect(sourceNames(chain)).toEqual(sourceNames(steps));
    const origins = (o: ObjectDetail) =>
      Object.fromEntries(Object.entries(o.lineage_summary.column_sources).map(([c, list]) => [c, list.map((x) => `${x.name}.${x.column}`).sort()]));
    expect(origins(chain)).toEqual(origins(steps));
    // The chain made no intermediate: its only dropped node is the loaded orders temp.
    expect(chain.lineage_summary.graph.nodes.filter((n) => n.kind === "object" && !n.exists).map((n) => n.operation)).toEqual(["load"]);
    expect(chain.row_count).toBe(steps.row_count);
  });

  it("keeps a replaced object's history: what was made from the old version still reaches its file", async () => {
    const v1 = join(dir, "v1.csv");
    const v2 = join(dir, "v2.csv");
    writeFileSync(v1, "k,v\n1,a\n2,b\n");
    writeFileSync(v2, "k,v\n3,c\n");
    expect((await runAndWait(h, `${JOBS}:loadGlobal`, { path: v1, name: "versions" })).status).toBe("COMPLETED");
    const first = await detail("versions");
    expect((await runAndWait(h, `${JOBS}:deriveGlobal`, { from: "versions", name: "from_versions" })).status).toBe("COMPLETED");
    expect(sourceNames(await detail("from_versions"))).toEqual(["object:versions"]);
    // Replaced: the new version came from v2; what was made from v1 now walks through v1 to its file.
    expect((await runAndWait(h, `${JOBS}:loadGlobal`, { path: v2, name: "versions" })).status).toBe("COMPLETED");
    const second = await detail("versions");
    expect(second.lineage_summary.sources.map((s) => s.name)).toEqual([v2]);
    const derived = await detail("from_versions");
    expect(derived.lineage_summary.sources.map((s) => s.name)).toEqual([v1]);
    const old = derived.lineage_summary.graph.nodes.find((n) => n.id === first.lineage_summary.graph.root.slice("object:".length))!;
    expect(old).toMatchObject({ name: "versions", table: "p_versions", scope: "global", exists: false, operation: "load" });
    expect(old.dropped_at).not.toBeNull();
    expect(derived.lineage_summary.column_sources.v!.map((o) => `${o.name}.${o.column}`)).toEqual([`${v1}.v`]);
  });

  it("bounds the walk: a cycle ends it, a very deep history is cut and says so", async () => {
    const { db, ids, clock } = h.service;
    const op = (objectId: bigint, inputId: bigint) =>
      recordOperation(db, {
        id: ids.next(),
        objectId,
        objectName: `n${objectId}`,
        operation: "filter",
        sqlText: "SELECT 1",
        jobId: null,
        taskId: null,
        attempt: null,
        nowMs: clock.now(),
        inputs: [{ id: inputId, name: `n${inputId}` }],
        columns: [{ column: "x", inputId, inputName: `n${inputId}`, inputColumn: "x" }],
      });
    // A cycle of dropped objects: a → b → a.
    const [a, b] = [ids.next(), ids.next()];
    await op(a, b);
    await op(b, a);
    const cycle = await walkUpstream(db, a, ["x"]);
    expect(cycle.nodes.map((n) => n.key).sort()).toEqual([`object:${a}`, `object:${b}`].sort());
    expect(cycle.truncated).toBe(false);
    expect(cycle.columnOrigins.x).toEqual([]);
    // A chain of 100 dropped objects: cut at the depth bound, and marked truncated.
    const chain = Array.from({ length: 100 }, () => ids.next());
    for (let i = 0; i < chain.length - 1; i++) await op(chain[i]!, chain[i + 1]!);
    const deep = await walkUpstream(db, chain[0]!, ["x"], { maxDepth: 64, maxNodes: 1_000 });
    expect(deep.truncated).toBe(true);
    expect(deep.nodes.length).toBe(65);
    const wide = await walkUpstream(db, chain[0]!, ["x"], { maxDepth: 1_000, maxNodes: 10 });
    expect(wide.truncated).toBe(true);
    expect(wide.nodes.length).toBe(10);
  });
});
