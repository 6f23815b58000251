// Bounds on a PostgreSQL statement that does not answer (store/db.ts statementDeadlineMs): PostgreSQL
// cancels one it is still running (statement_timeout, rolled back), and the client closes a
// connection that went silent (store/pg-deadline.ts). Either way the caller gets a failure it knows
// to ride out, and the pool's next statement works.

import { type AddressInfo, type Socket, connect, createServer } from "node:net";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { isConnectionFailure } from "../src/core/store-failures.js";
import { openStore } from "../src/store/db.js";
import { isStatementCancelled, recordThroughOutage } from "../src/store/errors.js";
import { BACKENDS, PG_URL } from "./support/backends.js";

const onPostgres = BACKENDS.some((backend) => backend.name === "distributed");

describe.skipIf(!onPostgres)("bounds on an unanswered PostgreSQL statement", () => {
  const db = openStore({ dialect: "postgres", location: PG_URL }, { statementDeadlineMs: 400, poolSize: 1 });
  afterAll(() => db.destroy());
  const pidOf = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

  it("PostgreSQL cancels a statement still running before the deadline; the connection stays and the engine would retry it", async () => {
    const before = await pidOf();
    const started = Date.now();
    // Busy for 30 s, as a statement waiting on a migration's lock would be.
    const error = await sql`select pg_sleep(30)`.execute(db).then(() => null, (e: unknown) => e);
    expect(isStatementCancelled(error), String(error)).toBe(true);
    // A bound, not a timing assertion: without the timeout the statement takes its 30 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await pidOf()).toBe(before);
    // recordThroughOutage runs a cancelled statement again, as after a dropped connection.
    let tries = 0;
    await recordThroughOutage(async () => {
      if (++tries === 1) await sql`select pg_sleep(30)`.execute(db);
    });
    expect(tries).toBe(2);
  });

  it("leaves statements that answer in time alone, on the same connection", async () => {
    const pids = new Set<number>();
    for (let i = 0; i < 5; i++) {
      await sql`select pg_sleep(0.05)`.execute(db);
      pids.add(await pidOf());
    }
    expect(pids.size).toBe(1);
  });

  /**
   * A path that stops carrying packets without closing: a proxy that stops forwarding when `silent`
   * is set, or (`silentAfterStartup`) on each connection once PostgreSQL said it is ready for its
   * first statement.
   */
  async function silencingProxy(mode: { silent: boolean; silentAfterStartup?: boolean }) {
    const sockets = new Set<Socket>();
    const target = new URL(PG_URL);
    const proxy = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      let ready = false;
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        sockets.add(from);
        from.on("error", () => undefined);
        from.on("data", (chunk: Buffer) => {
          if (mode.silent || ready) return;
          to.write(chunk);
          // ReadyForQuery: 'Z', length 5, a status byte.
          if (mode.silentAfterStartup && from === upstream && chunk.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) ready = true;
        });
        from.on("close", () => to.destroy());
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const through = new URL(PG_URL);
    through.hostname = "127.0.0.1";
    through.port = String((proxy.address() as AddressInfo).port);
    return {
      url: through.toString(),
      close() {
        for (const socket of sockets) socket.destroy();
        proxy.close();
      },
    };
  }

  it("closes a connection that went silent past the deadline, as a connection failure; the next statement opens a new one", async () => {
    const mode = { silent: false };
    const proxy = await silencingProxy(mode);
    const proxied = openStore({ dialect: "postgres", location: proxy.url }, { statementDeadlineMs: 400, poolSize: 1 });
    try {
      await sql`select 1`.execute(proxied);
      mode.silent = true;
      const started = Date.now();
      const error = await sql`select 1`.execute(proxied).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ code: "ETIMEDOUT", message: expect.stringMatching(/^PostgreSQL did not answer a statement within 0\.4 s/) });
      expect(isConnectionFailure(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
      mode.silent = false;
      expect((await sql<{ one: number }>`select 1 as one`.execute(proxied)).rows).toEqual([{ one: 1 }]);
    } finally {
      await proxied.destroy();
      proxy.close();
    }
  });

  // Found by review: a new connection's settings, sent before the pool hands it out, had no bound
  // (the statement deadline is put on the client after them), so a connection silent right after
  // its startup held its caller until the kernel gave up on the socket.
  it("bounds a new connection's settings too: one silent after its startup fails its caller as a dropped connection", async () => {
    const mode = { silent: false, silentAfterStartup: true };
    const proxy = await silencingProxy(mode);
    const proxied = openStore({ dialect: "postgres", location: proxy.url }, { statementDeadlineMs: 400, poolSize: 1 });
    try {
      const started = Date.now();
      const error = await sql`select 1`.execute(proxied).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ code: "ETIMEDOUT" });
      expect(isConnectionFailure(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
      mode.silentAfterStartup = false;
      expect((await sql<{ one: number }>`select 1 as one`.execute(proxied)).rows).toEqual([{ one: 1 }]);
    } finally {
      await proxied.destroy();
      proxy.close();
    }
  });
});
