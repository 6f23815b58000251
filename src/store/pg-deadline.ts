// A bound on how long a PostgreSQL connection may keep a statement unanswered.

import pg from "pg";

/**
 * A connection that stops answering without closing (a backend frozen, a network path that drops
 * packets rather than refusing them) leaves its statement waiting until the kernel gives up on
 * the socket, about 15 minutes on Linux: the task whose completion it carries, and its job, wait
 * with it. Past `deadlineMs` the socket is destroyed with an ETIMEDOUT error, which its caller reads
 * as a dropped connection: the engine records the outcome again on a new one (its statements are
 * guarded, so one that did commit is found as such), and the pool drops the dead connection.
 * The bound is the caller's to make generous: a statement that is merely slow is cut the same way.
 */
export function boundStatementTime(client: pg.PoolClient, deadlineMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const answer = query(...args);
    // Only the promise form is bounded: Kysely's (and the prepared statements') use of the client.
    if (!(answer instanceof Promise)) return answer;
    const timer = setTimeout(() => closeSilent(client, deadlineMs), deadlineMs);
    return answer.finally(() => clearTimeout(timer));
  }) as typeof client.query;
}

/** Destroys a connection that did not answer within `deadlineMs`, with the error its caller sees. */
function closeSilent(client: pg.ClientBase, deadlineMs: number): void {
  const error = Object.assign(new Error(`PostgreSQL did not answer a statement within ${deadlineMs / 1000} s: its connection was closed`), { code: "ETIMEDOUT" });
  (client as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream.destroy(error);
}

/**
 * Runs `settings` on a new connection before the pool hands it out, one at a time (a statement sent
 * while another runs is deprecated in pg 8, refused by pg 9), within `deadlineMs` in all when one is
 * given: boundStatementTime is not on the client yet, and a connection silent from here on held its
 * caller until the kernel gave up on the socket. A setting PostgreSQL refuses (one it lacks, such as
 * client_connection_check_interval before 14) is skipped; a connection that fails or goes silent
 * fails the hook, and the pool ends it and hands its caller the error, a dropped connection's.
 */
export async function applySettings(client: pg.ClientBase, settings: readonly string[], deadlineMs: number | undefined): Promise<void> {
  const stall = deadlineMs === undefined ? undefined : setTimeout(() => closeSilent(client, deadlineMs), deadlineMs);
  try {
    for (const setting of settings) {
      await client.query(setting).catch((error: unknown) => {
        if (!(error instanceof pg.DatabaseError)) throw error;
      });
    }
  } finally {
    clearTimeout(stall);
  }
}
