// After a crash, column-store tables that no registry row names (a half-built replacement, a temp
// whose registration never committed) are dropped at start; registered objects and tables that are
// not ours stay.

import { afterAll, beforeAll, expect, it } from "vitest";
import { dropOrphanTables } from "../src/engine/cleanup.js";
import { ident, sql } from "../src/data/sql.js";
import { forEachBackend } from "./support/backends.js";
import { addObject } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

forEachBackend("orphan column-store tables", (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend);
  });
  afterAll(() => h?.close());

  it("drops tables that look like objects and have no registry row", async () => {
    const columns = await h.service.columns();
    const kept = await addObject(h, "kept_object");
    const temp = await addObject(h, "", "temp");
    const create = (name: string) => columns.command(sql`CREATE TABLE ${ident(columns.database)}.${ident(name)} (x UInt8) ENGINE = MergeTree ORDER BY tuple()`);
    const orphans = ["t_912460069121605632", "p_kept_object_new_912460069121605633", "j_912460069121605634_daily", "p_lost"];
    for (const name of [...orphans, "someone_elses_table"]) await create(name);

    expect((await dropOrphanTables(h.service.db, columns)).sort()).toEqual([...orphans].sort());
    const left = (await columns.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${columns.database}`)).map((t) => t.name);
    expect(left).toEqual(expect.arrayContaining(["p_kept_object", temp, "someone_elses_table"]));
    for (const name of orphans) expect(left).not.toContain(name);
    expect(await h.call("get_object", { name: kept })).toMatchObject({ name: "kept_object" });
    expect(await dropOrphanTables(h.service.db, columns)).toEqual([]);
  });
});
