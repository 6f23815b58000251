// ETL over a CSV file shipped in the repository, in the column store: load the file as a data
// object, clean it, aggregate by region and by month side by side, and publish a global summary.
// Every table keeps its lineage (see `npx jobhouse data get sales_by_region`).
// Run it:  npx jobhouse run-job examples/sales.ts:salesPipeline --wait

import { fileURLToPath } from "node:url";
import { type DataObject, job, loadObject, task, z } from "jobhouse";

export const loadSales = task("load_sales", async ({ file }: { file: string }, ctx) => {
  const sales = await loadObject(fileURLToPath(new URL(file, import.meta.url)), { types: { region: "LowCardinality(String)" } });
  ctx.log.info(`loaded ${await sales.count()} rows from ${file} into ${sales.table}`);
  return sales;
});

export const cleanSales = task("clean_sales", async ({ raw }: { raw: DataObject }, ctx) => {
  const clean = await raw.filter("region != '' AND quantity > 0 AND unit_price > 0 AND match(date, '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')");
  const revenue = await clean.select({ region: "region", month: "substring(date, 1, 7)", product: "product", revenue: "quantity * unit_price" });
  ctx.log.info(`kept ${await revenue.count()} of ${await raw.count()} rows`);
  return revenue;
});

export const revenueByRegion = task("revenue_by_region", async ({ sales }: { sales: DataObject }) =>
  sales.groupBy("region").agg({ revenue: "round(sum(revenue), 2)", orders: "count()" }, { name: "sales_by_region", scope: "global", replace: true }),
);

export const revenueByMonth = task("revenue_by_month", async ({ sales }: { sales: DataObject }) =>
  sales.groupBy("month").agg({ revenue: "round(sum(revenue), 2)" }),
);

export const report = task("report", async ({ byRegion, byMonth, top }: { byRegion: DataObject; byMonth: DataObject; top: number }) => {
  const best = await (await byMonth.sort("revenue DESC")).limit(top);
  const total = Number(await byRegion.scalar("round(sum(revenue), 2)"));
  console.log(`total revenue ${total.toFixed(2)}`);
  return { total_revenue: total, by_region: await (await byRegion.sort("region")).rows(), best_months: await best.rows() };
});

export const salesPipeline = job(
  "sales",
  async ({ file, top }: { file: string; top: number }) => {
    const raw = loadSales({ file });
    const sales = cleanSales({ raw });
    // Two aggregations of the same cleaned data run side by side, then meet in the report.
    return report({ byRegion: revenueByRegion({ sales }), byMonth: revenueByMonth({ sales }), top });
  },
  { schema: z.object({ file: z.string().default("./data/sales.csv"), top: z.number().int().min(1).max(12).default(3) }) },
);
