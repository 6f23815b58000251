// A store this process cannot reach is refused in one line (CONTRACT §9): which store, at which
// address (password hidden), and what failed; never a stack trace.

import pg from "pg";
import { type Config, redactUrl } from "../core/config.js";
import { type ServiceError, unavailable } from "../core/errors.js";
import { clickHouseWords, failureReason, isConnectionFailure } from "../core/store-failures.js";

export const sqlUnreachable = (config: Config, error: unknown): ServiceError =>
  unavailable(`PostgreSQL at ${redactUrl(config.sql.location)} cannot be reached: ${failureReason(error)}`, "sql_unreachable");

export const clickHouseUnreachable = (config: Config, error: unknown): ServiceError =>
  unavailable(`ClickHouse at ${redactUrl(config.ch.location)} cannot be reached: ${failureReason(error)}`, "clickhouse_unreachable");

/** A failure to reach a store said as the one-line refusal; anything else as it was. */
export function asStoreRefusal(config: Config, store: "sql" | "clickhouse", error: unknown): unknown {
  if (!isConnectionFailure(error)) return error;
  if (store === "sql") return config.sql.dialect === "postgres" ? sqlUnreachable(config, error) : error;
  return config.ch.engine === "server" ? clickHouseUnreachable(config, error) : error;
}

/** Both distributed stores answer, or the first that does not is refused, before anything starts. */
export async function checkReachable(config: Config): Promise<void> {
  const client = new pg.Client({ connectionString: config.sql.location, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    throw sqlUnreachable(config, error);
  } finally {
    await client.end().catch(() => undefined);
  }
  await checkClickHouseReachable(config);
}

/**
 * A query with the URL's credentials, not /ping, which asks for none: a wrong password started
 * workers whose every data task then failed, and made server start an "unexpected failure".
 */
export async function checkClickHouseReachable(config: Config): Promise<void> {
  const url = new URL(config.ch.location);
  const probe = `${url.protocol}//${url.host}/?query=SELECT%201`;
  try {
    const credentials = { "X-ClickHouse-User": decodeURIComponent(url.username) || "default", "X-ClickHouse-Key": decodeURIComponent(url.password) };
    const response = await fetch(probe, { headers: credentials, signal: AbortSignal.timeout(5000) });
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new Error(clickHouseWords(text) ?? `HTTP ${response.status}`);
    }
  } catch (error) {
    throw clickHouseUnreachable(config, error);
  }
}
