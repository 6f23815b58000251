// `jobhouse server start` (CONTRACT §9): in distributed mode, REST, MCP and the web app over
// PostgreSQL and a ClickHouse server, with no workers (those are `worker start` processes); pending
// migrations are applied first, under the migrator's lock. In local mode it is `local start`.

import { readFileSync } from "node:fs";
import pg from "pg";
import { readApiToken, redactUrl, type Config } from "../core/config.js";
import { invalid, unavailable } from "../core/errors.js";
import { invoke, operationByName, operations, SYNTHETIC_ADMIN } from "../operations/index.js";
import { buildHttpApp } from "../surfaces/rest/app.js";
import { migrateToLatest } from "../store/migrate.js";
import { openService } from "./context.js";
import { WEB_ROOT, runLocalServer } from "./local-start.js";
import { ensurePortFree, listenOrRefuse } from "./listen.js";
import { untilStopSignal } from "./signals.js";

export interface ServerStartOptions {
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function runServer(config: Config, options: ServerStartOptions): Promise<number> {
  if (config.mode === "local") return runLocalServer(config, { port: options.port });
  if (config.auth === "users") {
    throw invalid("SERVICE_AUTH=users (the distributed default) is not available in this build yet: set SERVICE_AUTH=token and SERVICE_API_TOKEN");
  }
  const tls = readTls(options);
  await ensurePortFree(options.host, options.port);
  await checkReachable(config);

  const service = await openService(config, { longRunning: true });
  try {
    const applied = await migrateToLatest(service.db);
    if (applied.length > 0) service.log.info(`applied migrations: ${applied.join(", ")}`);
    await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
    if (readApiToken() === null) service.log.warn("SERVICE_API_TOKEN is not set: the server is open, every request is allowed");
    const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT, listenHost: options.host, allowedHosts: config.allowedHosts, tls });
    const port = await listenOrRefuse(app, options.host, options.port);
    service.log.info(`jobhouse ${service.version} listening on ${tls ? "https" : "http"}://${options.host}:${port} (distributed mode, no workers in this process)`);
    service.log.info(`got ${await untilStopSignal()}: shutting down`);
    await app.close();
    return 0;
  } finally {
    await service.close();
  }
}

function readTls(options: ServerStartOptions): { cert: Buffer; key: Buffer } | undefined {
  if (!options.tlsCert && !options.tlsKey) return undefined;
  if (!options.tlsCert || !options.tlsKey) throw invalid("--tls-cert and --tls-key go together");
  const read = (flag: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw invalid(`${flag} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  return { cert: read("--tls-cert", options.tlsCert), key: read("--tls-key", options.tlsKey) };
}

/** One line naming the store that cannot be reached (password hidden) and why, before anything starts. */
async function checkReachable(config: Config): Promise<void> {
  const client = new pg.Client({ connectionString: config.sql.location, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    throw unavailable(`PostgreSQL at ${redactUrl(config.sql.location)} cannot be reached: ${reason(error)}`, "sql_unreachable");
  } finally {
    await client.end().catch(() => undefined);
  }
  const url = new URL(config.ch.location);
  const ping = `${url.protocol}//${url.host}/ping`;
  try {
    const response = await fetch(ping, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  } catch (error) {
    throw unavailable(`ClickHouse at ${redactUrl(config.ch.location)} cannot be reached: ${reason(error)}`, "clickhouse_unreachable");
  }
}

const reason = (error: unknown): string => {
  const e = error as Error & { code?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error);
};
