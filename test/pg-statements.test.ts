// Named statements described once per connection (store/pg-statements.ts): the rows, counts and
// errors of every execution are pg's own, and only a connection's first execution of a statement
// asks PostgreSQL for its row description.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePreparedStatements } from "../src/store/pg-statements.js";
import { BACKENDS, PG_URL } from "./support/backends.js";

const onPostgres = BACKENDS.some((backend) => backend.name === "distributed");

describe.skipIf(!onPostgres)("PostgreSQL statements described once", () => {
  const client = new pg.Client({ connectionString: PG_URL });
  const table = `described_${process.pid}_${Date.now().toString(36)}`;
  let describes = 0;

  beforeAll(async () => {
    await client.connect();
    const connection = (client as unknown as { connection: { describe(message: unknown): void } }).connection;
    const describe = connection.describe.bind(connection);
    connection.describe = (message) => {
      describes++;
      describe(message);
    };
    usePreparedStatements(client as unknown as pg.PoolClient);
    await client.query(`create temporary table ${table} (id bigint primary key, name text, at timestamptz)`);
  });
  afterAll(() => client.end());

  const counted = async <T>(run: () => Promise<T>): Promise<{ result: T; describes: number }> => {
    const before = describes;
    const result = await run();
    return { result, describes: describes - before };
  };

  it("parse the same rows with and without the description", async () => {
    await client.query(`insert into ${table} (id, name, at) values (1, 'one', '2026-01-02T03:04:05Z'), (2, null, null)`);
    const select = () => client.query(`select id, name, at, id * 2 as twice from ${table} where id >= $1 order by id`, [1]);
    const first = await counted(select);
    const second = await counted(select);
    const third = await counted(select);
    expect([first.describes, second.describes, third.describes]).toEqual([1, 0, 0]);
    const expected = [
      { id: "1", name: "one", at: new Date("2026-01-02T03:04:05Z"), twice: "2" },
      { id: "2", name: null, at: null, twice: "4" },
    ];
    for (const { result } of [first, second, third]) {
      expect(result.rows).toEqual(expected);
      expect(result.rowCount).toBe(2);
      expect(result.command).toBe("SELECT");
      expect(result.fields.map((field) => field.name)).toEqual(["id", "name", "at", "twice"]);
    }
  });

  it("count the rows of a statement that returns none", async () => {
    const rename = (name: string) => client.query(`update ${table} set name = $1 where id = $2`, [name, 2]);
    expect((await counted(() => rename("two"))).describes).toBe(1);
    const again = await counted(() => rename("deux"));
    expect(again.describes).toBe(0);
    expect(again.result.rowCount).toBe(1);
    expect(again.result.rows).toEqual([]);
    expect((await client.query(`select name from ${table} where id = $1`, [2])).rows).toEqual([{ name: "deux" }]);
  });

  it("reject an execution that fails, and leave the connection usable", async () => {
    const divide = (by: number) => client.query(`select 10 / $1::int as quotient`, [by]);
    expect((await divide(2)).rows).toEqual([{ quotient: 5 }]);
    await expect(divide(0)).rejects.toThrow(/division by zero/);
    const after = await counted(() => divide(5));
    expect(after.result.rows).toEqual([{ quotient: 2 }]);
    expect(after.describes).toBe(0);
  });

  it("reject a value that cannot be sent before anything runs, and leave the connection usable", async () => {
    const pick = (value: unknown) => client.query(`select $1::text as value`, [value]);
    expect((await pick("a")).rows).toEqual([{ value: "a" }]);
    const unsendable = { toPostgres: () => { throw new Error("no text for this value"); } };
    await expect(pick(unsendable)).rejects.toThrow(/no text for this value/);
    expect((await pick("b")).rows).toEqual([{ value: "b" }]);
  });

  it("recover a statement whose first execution had a value that cannot be sent", async () => {
    // pg closes the statement then, yet counted it as parsed: every later execution failed.
    const pick = (value: unknown) => client.query(`select $1::text as first_value`, [value]);
    const unsendable = { toPostgres: () => { throw new Error("no text for this value"); } };
    await expect(pick(unsendable)).rejects.toThrow(/no text for this value/);
    expect((await pick("c")).rows).toEqual([{ first_value: "c" }]);
    expect((await pick("d")).rows).toEqual([{ first_value: "d" }]);
  });
});

describe.skipIf(!onPostgres)("a PostgreSQL connection ended under the store", () => {
  it("is dropped from the pool, not the process's end; the next statement reconnects", async () => {
    const { openStore } = await import("../src/store/db.js");
    const { sql } = await import("kysely");
    const application = `ended_${process.pid}_${Date.now().toString(36)}`;
    const url = new URL(PG_URL);
    url.searchParams.set("application_name", application);
    const db = openStore({ dialect: "postgres", location: url.toString() }, { poolSize: 2 });
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const pid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
      // Two connections: one stays idle, the other is taken by the transaction below.
      await Promise.all([sql`select pg_sleep(0.05)`.execute(db), sql`select pg_sleep(0.05)`.execute(db)]);
      const before = await pid();
      // An idle connection and one inside an open transaction, both ended by the server.
      let held = (): void => undefined;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const inTransaction = db.transaction().execute(async (tx) => {
        await sql`select 1`.execute(tx);
        held();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 1`.execute(tx);
      });
      await holding;
      const ended = await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [application]);
      expect(ended.rowCount).toBeGreaterThanOrEqual(2);
      await expect(inTransaction).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Still here (an unheard 'error' would have ended the test process) and answering.
      expect(await pid()).not.toBe(before);
    } finally {
      await admin.end();
      await db.destroy();
    }
  });
});
