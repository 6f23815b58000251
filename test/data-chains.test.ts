// Fluent data chains (CONTRACT §5, issue 11 item 3) on chDB and on a ClickHouse server: a chain
// awaited once is one statement and one object, equal on data to the same steps made one by one,
// its lineage names the chain's sources and follows columns through every step, reads run on a
// chain without making it, and errors name the step that caused them.

import { afterAll, beforeAll, expect, it } from "vitest";
import { DataChain, type DataObject, createObject } from "../src/objects/data-object.js";
import type { DataScope } from "../src/objects/object-registry.js";
import { scopePlane } from "../src/objects/scope-plane.js";
import { compileChain } from "../src/objects/chains.js";
import { ident, sql } from "../src/data/sql.js";
import type { ObjectDetail } from "../src/models/objects.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, withEngine } from "./support/engine.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("data chains", (backend) => {
  let h: Harness;
  let ds: DataScope;
  let sales: DataObject;
  let managers: DataObject;

  beforeAll(async () => {
    h = await startHarness(backend);
    ds = { db: h.service.db, columns: await h.service.columns(), ids: h.service.ids, clock: h.service.clock, jobId: null, taskId: null, attempt: null };
    const plane = scopePlane(ds);
    const regions = ["north", "south", "east", "west"];
    sales = await createObject(
      { id: Array.from({ length: 200 }, (_, i) => i), region: Array.from({ length: 200 }, (_, i) => regions[i % 4]!), amount: Array.from({ length: 200 }, (_, i) => (i * 37) % 500) },
      { name: "chain_sales" },
      plane,
    );
    managers = await createObject({ region: regions, manager: ["ana", "bo", "cy", "di"] }, { name: "chain_managers" }, plane);
  });
  afterAll(() => h?.close());

  const detail = async (name: string) => (await h.http("GET", `/api/v0/objects/${name}`)).body as ObjectDetail;
  const tableCount = async () => Number((await ds.columns.query<{ n: string }>(sql`SELECT count() AS n FROM system.tables WHERE database = ${ds.columns.database}`))[0]!.n);

  /** Six steps: filter, select, groupBy().agg, join, sort, limit. */
  const sixSteps = (name?: string) =>
    sales
      .filter("amount >= 100")
      .select({ region: "region", doubled: "amount * 2" })
      .groupBy("region")
      .agg({ total: "sum(doubled)", n: "count()" })
      .join(managers, { on: "region" })
      .sort("total DESC")
      .limit(3, name ? { name } : undefined);

  it("makes a six-step chain with one statement and one table, equal on data to the steps one by one", async () => {
    const before = await tableCount();
    const chained = await sixSteps("chain_six");
    expect(await tableCount()).toBe(before + 1);

    const kept = await sales.filter("amount >= 100");
    const doubled = await kept.select({ region: "region", doubled: "amount * 2" });
    const totals = await doubled.groupBy("region").agg({ total: "sum(doubled)", n: "count()" });
    const named = await totals.join(managers, { on: "region" });
    const sorted = await named.sort("total DESC");
    const stepwise = await sorted.limit(3);
    expect(await chained.rows()).toEqual(await stepwise.rows());
    expect((await chained.rows()).length).toBe(3);
    expect(await chained.columns()).toEqual(await stepwise.columns());

    const { lineage_summary: lineage } = await detail("chain_six");
    expect(lineage.produced_by?.operation).toBe("filter+select+group_by+join+sort+limit");
    expect(lineage.operations).toHaveLength(1);
    const statement = lineage.operations[0]!.sql;
    expect(statement.match(/CREATE TABLE/g)).toHaveLength(1);
    expect(statement).not.toContain(";");
    expect(statement).toContain(ident(sales.table).text);
  });

  it("names the chain's sources as its direct upstream and follows every column through the steps", async () => {
    await sixSteps("chain_lineage");
    const { lineage_summary: lineage } = await detail("chain_lineage");
    expect([...lineage.upstream].sort()).toEqual(["chain_managers", "chain_sales"]);
    expect(lineage.columns.total).toEqual([{ object: "chain_sales", column: "amount" }]);
    expect(lineage.columns.n ?? []).toEqual([]); // count() reads no column
    expect(lineage.columns.manager).toEqual([{ object: "chain_managers", column: "manager" }]);
    expect([...lineage.columns.region!].sort((a, b) => a.object.localeCompare(b.object))).toEqual([
      { object: "chain_managers", column: "region" },
      { object: "chain_sales", column: "region" },
    ]);
    // The sources know it as made from them, and no intermediate object was registered.
    expect((await detail("chain_sales")).lineage_summary.downstream).toContain("chain_lineage");
  });

  // Found by trying the product: a filter or select after a sort read its rows nearly in order
  // (ClickHouse reads a sorted subquery in parallel blocks): 3 to 7 inversions in 1,000,000 rows.
  it("keeps a sort through the filter, select and distinct after it", async () => {
    // What a read orders by: the sort, handed on by each step that keeps its column.
    const orderOf = async (chain: DataChain) => (await compileChain(ds, chain.node())).sortSql;
    const small = sales.sort("amount DESC");
    expect(await orderOf(small.filter("id > 3"))).toBe("`amount` DESC");
    expect(await orderOf(small.select(["amount", "id"]).filter("id > 3"))).toBe("`amount` DESC");
    expect(await orderOf(small.distinct(["amount"]))).toBe("`amount` DESC");
    expect(await orderOf(small.select({ amount: "amount * 2" }))).toBeNull();
    expect(await orderOf(small.select(["id"]))).toBeNull();
    // And on a table large enough for ClickHouse to read it in parallel blocks.
    const n = 1_000_000;
    const id = Array.from({ length: n }, (_, i) => i);
    const big = await createObject({ id, v: id.map((i) => (i * 7919) % 1_000_003) }, {}, scopePlane(ds));
    const inversions = (values: unknown[]) => values.reduce<number>((count, value, i) => count + (i > 0 && (value as number) > (values[i - 1] as number) ? 1 : 0), 0);
    const sorted = big.sort("v DESC");
    expect(inversions(await sorted.filter("id % 2 = 0").column("v"))).toBe(0);
    expect(inversions(await sorted.select(["v"]).column("v"))).toBe(0);
    expect(inversions(await sorted.select({ v: "v", w: "v + 1" }).filter("w > 10").column("w"))).toBe(0);
    expect(inversions(await sorted.distinct(["v"]).column("v"))).toBe(0);
    // A select that drops or redefines the sort's column ends the sort: nothing claims an order.
    expect((await sorted.select({ v: "0 - v" }).column("v")).length).toBe(n);
  }, 120_000);

  it("reads a chain without making it: rows, count, scalar, column, columns and stream", async () => {
    const chain = sales.filter("region = 'north'").select({ id: "id", amount: "amount" }).sort("amount DESC", "id ASC");
    expect(chain).toBeInstanceOf(DataChain);
    const tables = await tableCount();
    const objects = (await h.http("GET", "/api/v0/objects?limit=500")).body as { total: number };
    const made = await chain;
    const expected = await made.rows();
    const afterMaking = await tableCount();
    expect(afterMaking).toBe(tables + 1);

    const again = sales.filter("region = 'north'").select({ id: "id", amount: "amount" }).sort("amount DESC", "id ASC");
    expect(await again.rows()).toEqual(expected);
    expect(await again.count()).toBe(50);
    expect(await again.scalar("sum(amount)")).toBe(expected.reduce((sum, row) => sum + Number(row.amount), 0));
    expect(await again.column("id")).toEqual(expected.map((row) => row.id));
    expect((await again.columns()).map((c) => c.name)).toEqual(["id", "amount"]);
    expect(await again.rows({ limit: 5, offset: 2 })).toEqual(expected.slice(2, 7));
    const streamed: unknown[] = [];
    for await (const batch of again.stream(16)) streamed.push(...batch);
    expect(streamed).toHaveLength(50);
    expect(await tableCount()).toBe(afterMaking);
    expect(((await h.http("GET", "/api/v0/objects?limit=500")).body as { total: number }).total).toBe(objects.total + 1);
  });

  it("chains unions and joins of chains, and awaits a chain once however often it is awaited", async () => {
    const north = sales.filter("region = 'north'");
    const south = sales.filter("region = 'south'");
    const both = north.union(south).join(managers.filter("manager != 'cy'"), { on: "region" });
    const [first, second] = await Promise.all([both, both]);
    expect(first!.name).toBe(second!.name);
    expect(await first!.count()).toBe(100);
    expect(new Set(await first!.column("manager"))).toEqual(new Set(["ana", "bo"]));
  });

  it("names the step an error comes from, ours or ClickHouse's, and keeps placements on the last step", async () => {
    const tables = await tableCount();
    await expect(sales.filter("amount > 1").select(["id", "amount"]).sort("region")).rejects.toThrow(/^step 3 \(sort\): sort key "region" must be a column/);
    await expect(sales.filter("amount > 1").filter("no_such_column > 2").select(["id"])).rejects.toThrow(/^step 2 \(filter\): .*no_such_column/i);
    await expect(sales.select(["id"]).filter("amount > 1").count()).rejects.toThrow(/^step 2 \(filter\): .*amount/i);
    // Found by trying the product: 2**64 passed as an integer, then each engine refused it its own way.
    await expect(sales.limit(2 ** 64).count()).rejects.toThrow(/^step 1 \(limit\): limit must be a whole number from 0 to 2\^53 - 1/);
    // Found by trying the product: a read said "step 1 (select): step 1 (select): …".
    await expect(sales.select({ z: "nope + 1" }).rows()).rejects.toThrow(/^step 1 \(select\): (?!step)/);
    // Found by trying the product: ClickHouse's "Column id already exists" said nothing of why.
    await expect(sales.filter("amount > 1").groupBy("id").agg({ id: "count()" })).rejects.toThrow(/^step 2 \(groupBy\(\)\.agg\): aggregate "id" has the name of a group key/);
    expect(() => sales.filter("amount > 1", { name: "too_early" }).select(["id"])).toThrow(/goes on a chain's last step/);
    expect(() => JSON.stringify({ result: sales.filter("amount > 1") })).toThrow(/await it/);
    expect(await tableCount()).toBe(tables);
  });

  it("runs in a job: a task returns an awaited chain as its object", async () => {
    const engine = await withEngine(h);
    try {
      const job = await runAndWait(h, "test/fixtures/data-jobs.ts:chainJob");
      expect(job.status, job.error ?? "").toBe("COMPLETED");
      const task = (await h.http("GET", `/api/v0/tasks/${job.tasks.find((t) => t.name === "chained")!.id}`)).body as { result_ref: { object: string } };
      const made = await detail(task.result_ref.object);
      expect(made.lineage_summary.produced_by?.operation).toBe("filter+group_by+sort");
      expect(made.row_count).toBe(2);
    } finally {
      await engine.stop();
    }
  });
});
