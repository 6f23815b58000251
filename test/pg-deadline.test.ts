// A statement PostgreSQL leaves unanswered closes its connection after the deadline (store/pg-deadline.ts):
// the caller gets a connection failure it knows to ride out, and the pool's next statement works.

import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { isConnectionFailure } from "../src/core/store-failures.js";
import { openStore } from "../src/store/db.js";
import { BACKENDS, PG_URL } from "./support/backends.js";

const onPostgres = BACKENDS.some((backend) => backend.name === "distributed");

describe.skipIf(!onPostgres)("a bound on an unanswered PostgreSQL statement", () => {
  const db = openStore({ dialect: "postgres", location: PG_URL }, { statementDeadlineMs: 300, poolSize: 1 });
  afterAll(() => db.destroy());

  it("closes the connection past the deadline as a connection failure; the next statement runs on a new one", async () => {
    const pidOf = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
    const before = await pidOf();
    const started = Date.now();
    // A backend busy for 30 s answers nothing meanwhile, as a frozen one would.
    const error = await sql`select pg_sleep(30)`.execute(db).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: "ETIMEDOUT", message: expect.stringMatching(/^PostgreSQL did not answer a statement within 0\.3 s/) });
    expect(isConnectionFailure(error)).toBe(true);
    // A bound, not a timing assertion: without the deadline the statement takes its 30 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    const after = await pidOf();
    expect(after).not.toBe(before);
    await sql`select pg_terminate_backend(${before})`.execute(db);
  });

  it("leaves statements that answer in time alone, on the same connection", async () => {
    const pids = new Set<number>();
    for (let i = 0; i < 5; i++) {
      await sql`select pg_sleep(0.05)`.execute(db);
      pids.add((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid);
    }
    expect(pids.size).toBe(1);
  });
});
