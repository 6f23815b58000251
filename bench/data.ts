// Benchmark (issue: data plane): 1M-row ingest, column sum, filter, group-by sum, join and count
// distinct, each through the data API and as the equivalent raw SQL on the same chDB session, in
// the same run. The difference is the data API's bookkeeping (registry, lineage, type handling).
// Run: npm run bench:data [-- --rows 1000000 --runs 5 --repeats 5]

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openService } from "../src/app/context.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { ident, raw, sql } from "../src/data/sql.js";
import { type DataObject, createObject } from "../src/objects/data-object.js";
import { scopePlane } from "../src/objects/scope-plane.js";
import type { DataScope } from "../src/objects/object-registry.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";

const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const ROWS = Number(args.get("--rows") ?? 1_000_000);
const RUNS = Number(args.get("--runs") ?? 5);
const REPEATS = Number(args.get("--repeats") ?? 5);

const service = await openService(loadConfig({ SERVICE_HOME: mkdtempSync(join(tmpdir(), "jobhouse-data-bench-")) }), { log: createLogger("error") });
await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
const columns = await service.columns();
const ds: DataScope = { db: service.db, columns, ids: service.ids, clock: service.clock, jobId: null, taskId: null, attempt: null };
const db = ident(columns.database);
let rawTables = 0;
const rawTable = () => raw(`${db.text}.${ident(`raw_${rawTables++}`).text}`);

const REGIONS = ["north", "south", "east", "west", "central"];
const data = {
  id: Array.from({ length: ROWS }, (_, i) => i),
  amount: Array.from({ length: ROWS }, (_, i) => (i * 7919) % 1000),
  region: Array.from({ length: ROWS }, (_, i) => REGIONS[i % REGIONS.length]!),
};
const managers = { region: REGIONS, manager: ["ann", "bob", "cy", "dee", "eve"] };

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// Raw SQL side: the same table and rows a user would make by hand, through the same client.
async function rawIngest(): Promise<string> {
  const table = rawTable();
  await columns.command(sql`CREATE TABLE ${table} (id Int64, amount Int64, region String) ENGINE = MergeTree ORDER BY tuple()`);
  const name = table.text.split(".")[1]!.replace(/`/g, "");
  for (let start = 0; start < ROWS; start += 100_000) {
    const rows = [];
    for (let i = start; i < Math.min(ROWS, start + 100_000); i++) rows.push({ id: data.id[i], amount: data.amount[i], region: data.region[i] });
    await columns.insertRows(name, rows);
  }
  return table.text;
}

const results: Record<string, { api: number[]; raw: number[] }> = {};
const record = (name: string, api: number, rawMs: number) => {
  results[name] ??= { api: [], raw: [] };
  results[name].api.push(api);
  results[name].raw.push(rawMs);
};

for (let run = 0; run < RUNS; run++) {
  let sales!: DataObject;
  let rawSales = "";
  // Alternate which side goes first, so caches and warm-up favour neither.
  const apiFirst = run % 2 === 0;
  const ingestApi = () => time(async () => (sales = await createObject(data, {}, scopePlane(ds))));
  const ingestRaw = () => time(async () => (rawSales = await rawIngest()));
  const [a, r] = apiFirst ? [await ingestApi(), await ingestRaw()] : [0, await ingestRaw()];
  record("ingest 1M rows", apiFirst ? a : await ingestApi(), r);

  const regions = await createObject(managers, {}, scopePlane(ds));
  const rawRegions = rawTable();
  await columns.command(sql`CREATE TABLE ${rawRegions} ENGINE = MergeTree ORDER BY tuple() AS SELECT * FROM ${raw(`${db.text}.${ident(regions.table).text}`)}`);

  const pairs: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
    ["column sum", () => sales.scalar("sum(amount)"), () => columns.query(sql`SELECT sum(amount) AS value FROM ${raw(rawSales)}`)],
    [
      "filter",
      async () => await sales.filter("amount > 500"),
      () => columns.command(sql`CREATE TABLE ${rawTable()} ENGINE = MergeTree ORDER BY tuple() AS SELECT * FROM ${raw(rawSales)} WHERE (amount > 500)`),
    ],
    [
      "group-by sum",
      async () => await sales.groupBy("region").agg({ total: "sum(amount)" }),
      () => columns.command(sql`CREATE TABLE ${rawTable()} ENGINE = MergeTree ORDER BY tuple() AS SELECT region, sum(amount) AS total FROM ${raw(rawSales)} GROUP BY region`),
    ],
    [
      "join",
      async () => await sales.join(regions, { on: "region" }),
      () =>
        columns.command(
          sql`CREATE TABLE ${rawTable()} ENGINE = MergeTree ORDER BY tuple() AS SELECT id, amount, region, manager FROM (SELECT * FROM ${raw(rawSales)}) AS l ALL INNER JOIN (SELECT region, manager FROM ${rawRegions}) AS r USING region`,
        ),
    ],
    ["count distinct", () => sales.scalar("uniqExact(region)"), () => columns.query(sql`SELECT uniqExact(region) AS value FROM ${raw(rawSales)}`)],
    // Not against raw SQL: a 4-step chain (one statement) against the same 4 steps awaited one by
    // one (four objects, three of them intermediate tables).
    [
      "4-step chain vs the steps one by one",
      async () => await sales.filter("amount > 100").select({ region: "region", doubled: "amount * 2" }).groupBy("region").agg({ total: "sum(doubled)" }).sort("total DESC"),
      async () => {
        const kept = await sales.filter("amount > 100");
        const doubled = await kept.select({ region: "region", doubled: "amount * 2" });
        const totals = await doubled.groupBy("region").agg({ total: "sum(doubled)" });
        return await totals.sort("total DESC");
      },
    ],
  ];
  // Operations of a few milliseconds are sampled several times per run, alternating sides, so a
  // garbage-collection pause does not decide a ratio.
  for (const [name, api, rawSql] of pairs) {
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      if ((run + repeat) % 2 === 0) {
        const apiMs = await time(api);
        record(name, apiMs, await time(rawSql));
      } else {
        const rawMs = await time(rawSql);
        record(name, await time(api), rawMs);
      }
    }
  }
  console.log(`run ${run + 1} done`);
}

console.log(`\n${ROWS.toLocaleString("en")} rows, ${RUNS} runs (operations ${REPEATS} times per run), medians:`);
console.log("operation          data API ms   raw SQL ms   ratio");
for (const [name, r] of Object.entries(results)) {
  const api = median(r.api);
  const rawMs = median(r.raw);
  console.log(`${name.padEnd(18)} ${api.toFixed(1).padStart(11)}  ${rawMs.toFixed(1).padStart(11)}   ${(api / rawMs).toFixed(2)}`);
}
await service.close();
