// Test data arranged through the real stores: workers, data objects, many jobs.

import { ident, sql } from "../../src/data/sql.js";
import { insertObject } from "../../src/store/data-objects.js";
import { insertWorker } from "../../src/store/workers.js";
import type { Harness } from "./harness.js";

export async function addWorker(h: Harness): Promise<string> {
  const id = h.service.ids.next();
  await insertWorker(h.service.db, { id, hostname: "test-host", pid: 4242, concurrency: 4, maxTasks: null, nowMs: h.service.clock.now() });
  return id.toString();
}

/** A real column-store table with rows, registered as a data object. */
export async function addObject(h: Harness, name: string, scope: "temp" | "job" | "global" = "global", rows = 3): Promise<string> {
  const store = await h.service.columns();
  const id = h.service.ids.next();
  const table = scope === "global" ? `p_${name}` : scope === "temp" ? `t_${id}` : `j_0_${name}`;
  const qualified = sql`${ident(store.database)}.${ident(table)}`;
  await store.command(sql`CREATE TABLE ${qualified} (id Int64, label Nullable(String), tags Array(String)) ENGINE = MergeTree ORDER BY id`);
  if (rows > 0) {
    const values = Array.from({ length: rows }, (_, i) => `(${i}, ${i % 2 ? "NULL" : `'row${i}'`}, ['a'])`).join(", ");
    await store.command(sql`INSERT INTO ${qualified} VALUES ${sql([values] as unknown as TemplateStringsArray)}`);
  }
  await insertObject(h.service.db, {
    id,
    name: scope === "temp" ? table : name,
    table_name: table,
    scope,
    job_id: null,
    task_id: null,
    created_at: BigInt(h.service.clock.now()),
  });
  return scope === "temp" ? table : name;
}
