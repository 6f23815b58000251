import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "./db.js";

describe("SQLite rows", () => {
  const db = openStore({ dialect: "sqlite", location: ":memory:" });
  afterAll(() => db.destroy());

  it("come back as objects keyed by column, integers as bigint, the later of two same names winning", async () => {
    const { rows } = await sql<Record<string, unknown>>`select 1 as a, 'x' as b, null as c, 2 as a`.execute(db);
    expect(rows).toEqual([{ a: 2n, b: "x", c: null }]);
  });

  it("keep a column named __proto__ as a field, not a prototype", async () => {
    const { rows } = await sql<Record<string, unknown>>`select 7 as "__proto__", 1 as "x"`.execute(db);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(rows[0], "__proto__")?.value).toBe(7n);
  });

  it("are the same through a cached statement, a stream, and a write", async () => {
    await sql`create table t (id integer, name text)`.execute(db);
    const insert = await db.insertInto("t" as never).values({ id: 1, name: "one" } as never).executeTakeFirst();
    expect(insert.numInsertedOrUpdatedRows).toBe(1n);
    for (let i = 0; i < 2; i++) expect(await db.selectFrom("t" as never).selectAll().execute()).toEqual([{ id: 1n, name: "one" }]);
    const streamed: unknown[] = [];
    for await (const row of db.selectFrom("t" as never).selectAll().stream()) streamed.push(row);
    expect(streamed).toEqual([{ id: 1n, name: "one" }]);
  });

  it("follow a schema change: after a migration here, and after another process's", async () => {
    await sql`create table s (a integer, b text)`.execute(db);
    await sql`insert into s values (1, 'x')`.execute(db);
    expect((await sql`select * from s`.execute(db)).rows).toEqual([{ a: 1n, b: "x" }]);
    await sql`alter table s add column c text default 'here'`.execute(db);
    expect((await sql`select * from s`.execute(db)).rows).toEqual([{ a: 1n, b: "x", c: "here" }]);

    const dir = mkdtempSync(join(tmpdir(), "jobhouse-db-test-"));
    const shared = openStore({ dialect: "sqlite", location: join(dir, "shared.db") });
    try {
      await sql`create table s (a integer)`.execute(shared);
      await sql`insert into s values (1)`.execute(shared);
      expect((await sql`select * from s`.execute(shared)).rows).toEqual([{ a: 1n }]);
      const other = new SQLite(join(dir, "shared.db"));
      other.exec("alter table s add column d text default 'there'");
      other.close();
      expect((await sql`select * from s`.execute(shared)).rows).toEqual([{ a: 1n, d: "there" }]);
    } finally {
      await shared.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
