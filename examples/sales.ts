// ETL over a CSV file shipped in the repository: load, clean, aggregate by region and by month in
// parallel, then report. Run it:  npx jobhouse run-job examples/sales.ts:salesPipeline --wait

import { readFile } from "node:fs/promises";
import { job, task, z } from "jobhouse";

interface Sale {
  order_id: number;
  date: string;
  region: string;
  product: string;
  quantity: number;
  unit_price: number;
}

export const loadSales = task("load_sales", async ({ file }: { file: string }, ctx) => {
  const text = await readFile(new URL(file, import.meta.url), "utf8");
  const [header, ...lines] = text.trim().split("\n");
  const columns = header!.split(",");
  const rows = lines.map((line) => Object.fromEntries(line.split(",").map((value, i) => [columns[i], value])));
  ctx.log.info(`loaded ${rows.length} rows from ${file}`);
  return rows;
});

export const cleanSales = task("clean_sales", async ({ rows }: { rows: Record<string, string>[] }, ctx) => {
  const clean: Sale[] = [];
  for (const row of rows) {
    const sale = {
      order_id: Number(row.order_id),
      date: row.date ?? "",
      region: row.region ?? "",
      product: row.product ?? "",
      quantity: Number(row.quantity),
      unit_price: Number(row.unit_price),
    };
    if (!sale.region || !(sale.quantity > 0) || !(sale.unit_price > 0) || !/^\d{4}-\d{2}-\d{2}$/.test(sale.date)) continue;
    clean.push(sale);
  }
  ctx.log.info(`kept ${clean.length} of ${rows.length} rows; rejected ${rows.length - clean.length}`);
  return clean;
});

const revenueBy = (sales: Sale[], key: (s: Sale) => string) => {
  const totals: Record<string, number> = {};
  for (const sale of sales) totals[key(sale)] = Math.round(((totals[key(sale)] ?? 0) + sale.quantity * sale.unit_price) * 100) / 100;
  return totals;
};

export const revenueByRegion = task("revenue_by_region", async ({ sales }: { sales: Sale[] }) => revenueBy(sales, (s) => s.region));
export const revenueByMonth = task("revenue_by_month", async ({ sales }: { sales: Sale[] }) => revenueBy(sales, (s) => s.date.slice(0, 7)));

export const report = task(
  "report",
  async ({ byRegion, byMonth, top }: { byRegion: Record<string, number>; byMonth: Record<string, number>; top: number }, ctx) => {
    const total = Object.values(byRegion).reduce((sum, v) => sum + v, 0);
    const best = Object.entries(byMonth).sort((a, b) => b[1] - a[1]).slice(0, top);
    console.log(`total revenue ${total.toFixed(2)} across ${Object.keys(byRegion).length} regions`);
    ctx.log.info(`best months: ${best.map(([m, v]) => `${m} ${v.toFixed(2)}`).join(", ")}`);
    return { total_revenue: Math.round(total * 100) / 100, by_region: byRegion, best_months: Object.fromEntries(best) };
  },
);

export const salesPipeline = job(
  "sales",
  async ({ file, top }: { file: string; top: number }) => {
    const rows = loadSales({ file });
    const sales = cleanSales({ rows });
    // Two aggregations of the same cleaned data run side by side, then meet in the report.
    return report({ byRegion: revenueByRegion({ sales }), byMonth: revenueByMonth({ sales }), top });
  },
  { schema: z.object({ file: z.string().default("./data/sales.csv"), top: z.number().int().min(1).max(12).default(3) }) },
);
