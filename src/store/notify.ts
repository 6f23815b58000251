// PostgreSQL NOTIFY as the change feed's transport between processes (channel `job_events`). One
// dedicated connection listens; it reconnects by itself and then reports a resync, since messages
// sent while it was down are gone. Sending goes through the store's pool.

import { sql } from "kysely";
import pg from "pg";
import { type Store, currentPgSchema } from "./db.js";

/** PostgreSQL refuses NOTIFY payloads from 8,000 bytes; stay clear of it. */
const MAX_PAYLOAD_BYTES = 7_500;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface NotifyChannel {
  readonly maxPayloadBytes: number;
  send(payload: string): Promise<void>;
  listen(onPayload: (payload: string) => void, onResync: () => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * `job_events`, or `job_events:<schema>` when the store lives in another schema than `public`
 * (several deployments, or test suites, sharing one database must not wake each other).
 */
async function channelName(db: Store): Promise<string> {
  const schema = (await currentPgSchema(db)) ?? "public";
  return schema === "public" ? "job_events" : `job_events:${schema}`;
}

/**
 * The listener's application_name: the deployment's own (from its URL) with ":listener", so an
 * operator finds every connection of the deployment by that name; "jobhouse-listener" without one.
 */
export function listenerConnectionString(connectionString: string): { connectionString: string; application_name: string } {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL pg's own parser takes apart differently (a socket path): the default name.
    return { connectionString, application_name: "jobhouse-listener" };
  }
  const own = url.searchParams.get("application_name");
  if (!own) return { connectionString, application_name: "jobhouse-listener" };
  // pg takes the URL's parameter over the client option, so the name is changed in the URL itself.
  const name = `${own.slice(0, 50)}:listener`;
  url.searchParams.set("application_name", name);
  return { connectionString: url.toString(), application_name: name };
}

export function openNotifyChannel(db: Store, connectionString: string, onError: (error: unknown) => void, onReconnected: () => void = () => undefined): NotifyChannel {
  // Asked on first use, not at open: a one-shot command that never sends asks nothing (and a
  // failed lookup surfaces where it is awaited, never as an unhandled rejection).
  let channelLookup: Promise<string> | undefined;
  const channel = () => (channelLookup ??= channelName(db));
  let client: pg.Client | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;

  async function connect(onPayload: (payload: string) => void): Promise<pg.Client> {
    const name = await channel();
    const next = new pg.Client({ ...listenerConnectionString(connectionString), keepAlive: true });
    next.on("notification", (message) => {
      if (message.channel === name && message.payload !== undefined) onPayload(message.payload);
    });
    // The process must not crash on a dropped connection: errors end the client and reconnect.
    next.on("error", () => undefined);
    await next.connect();
    await next.query(`LISTEN "${name.replaceAll('"', '""')}"`);
    return next;
  }

  return {
    maxPayloadBytes: MAX_PAYLOAD_BYTES,
    async send(payload) {
      await sql`SELECT pg_notify(${await channel()}, ${payload})`.execute(db);
    },
    async listen(onPayload, onResync) {
      let delayMs = RECONNECT_MIN_MS;
      const watch = (current: pg.Client) =>
        current.once("end", () => {
          if (closed) return;
          client = null;
          onError(new Error("its listener connection closed: reconnecting"));
          retry();
        });
      const retry = () => {
        retryTimer = setTimeout(() => {
          connect(onPayload).then(
            (next) => {
              if (closed) return void next.end().catch(() => undefined);
              client = next;
              delayMs = RECONNECT_MIN_MS;
              watch(next);
              onReconnected();
              onResync();
            },
            (error: unknown) => {
              onError(error);
              delayMs = Math.min(RECONNECT_MAX_MS, delayMs * 2);
              retry();
            },
          );
        }, delayMs);
        retryTimer.unref();
      };
      client = await connect(onPayload);
      watch(client);
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
