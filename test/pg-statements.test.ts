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
