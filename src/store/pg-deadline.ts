// A bound on how long a PostgreSQL connection may keep a statement unanswered.

import type pg from "pg";

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
  const socket = () => (client as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream;
  client.query = ((...args: unknown[]) => {
    const answer = query(...args);
    // Only the promise form is bounded: Kysely's (and the prepared statements') use of the client.
    if (!(answer instanceof Promise)) return answer;
    const timer = setTimeout(() => {
      const error = Object.assign(new Error(`PostgreSQL did not answer a statement within ${deadlineMs / 1000} s: its connection was closed`), { code: "ETIMEDOUT" });
      socket().destroy(error);
    }, deadlineMs);
    return answer.finally(() => clearTimeout(timer));
  }) as typeof client.query;
}
