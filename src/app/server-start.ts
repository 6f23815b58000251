// `jobhouse server start` (CONTRACT §9): in distributed mode, REST, MCP and the web app over
// PostgreSQL and a ClickHouse server, with no workers (those are `worker start` processes); pending
// migrations are applied first, under the migrator's lock. In local mode it is `local start`.

import { readFileSync } from "node:fs";
import pg from "pg";
import { readApiToken, redactUrl, type Config } from "../core/config.js";
import { invalid, unavailable } from "../core/errors.js";
import { invoke, operationByName, operations, SYNTHETIC_ADMIN } from "../operations/index.js";
import { buildHttpApp } from "../surfaces/rest/app.js";
import { createMetrics } from "./metrics.js";
import { migrateToLatest } from "../store/migrate.js";
import { type OpenedService, openService } from "./context.js";
import { MIN_JWT_SECRET_BYTES } from "../core/access-tokens.js";
import { checkPasswordRules, hashPassword } from "../core/passwords.js";
import { Username } from "../models/auth.js";
import { countUsers, insertFirstUser } from "../store/users.js";
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
  if (config.auth === "users") checkJwtSecret(config);
  const tls = readTls(options);
  await ensurePortFree(options.host, options.port);
  await checkReachable(config);

  const service = await openService(config, { longRunning: true });
  try {
    const applied = await migrateToLatest(service.db);
    if (applied.length > 0) service.log.info(`applied migrations: ${applied.join(", ")}`);
    await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
    if (config.auth === "users") await seedAdmin(service);
    else if (readApiToken() === null) service.log.warn("SERVICE_API_TOKEN is not set: the server is open, every request is allowed");
    const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT, listenHost: options.host, allowedHosts: config.allowedHosts, tls, metrics: createMetrics(service) });
    const port = await listenOrRefuse(app, options.host, options.port);
    service.log.info(`jobhouse ${service.version} listening on ${tls ? "https" : "http"}://${options.host}:${port} (distributed mode, no workers in this process)`);
    service.log.info(`got ${await untilStopSignal()}: shutting down`);
    await app.close();
    return 0;
  } finally {
    await service.close();
  }
}

/** CONTRACT §8: Scheme B needs a signing secret of at least 32 bytes; one line naming the variable otherwise. */
function checkJwtSecret(config: Config): void {
  if (!config.jwtSecret) throw invalid("SERVICE_JWT_SECRET is not set: SERVICE_AUTH=users (the distributed default) signs access tokens with it; set at least 32 random bytes (e.g. openssl rand -base64 48)", "jwt_secret_missing");
  if (Buffer.byteLength(config.jwtSecret, "utf8") < MIN_JWT_SECRET_BYTES) {
    throw invalid(`SERVICE_JWT_SECRET is too short: at least ${MIN_JWT_SECRET_BYTES} bytes (e.g. openssl rand -base64 48)`, "jwt_secret_short");
  }
}

/**
 * SPEC Scheme B rule 2: with SERVICE_ADMIN_USERNAME and SERVICE_ADMIN_PASSWORD set, an admin is
 * created while the users table is empty (several servers starting at once create one).
 */
async function seedAdmin(service: OpenedService): Promise<void> {
  const { adminUsername, adminPassword } = service.config;
  if (adminUsername && adminPassword) {
    const created = await invokeSeed(service, adminUsername, adminPassword);
    if (created) service.log.info(`created the first admin, ${adminUsername}, from SERVICE_ADMIN_USERNAME`);
  } else if ((await countUsers(service.db)) === 0) {
    service.log.warn("no user exists yet: create the first admin with `jobhouse user create --username U --role admin` (or set SERVICE_ADMIN_USERNAME and SERVICE_ADMIN_PASSWORD)");
  }
}

async function invokeSeed(service: OpenedService, username: string, password: string): Promise<boolean> {
  const parsed = Username.safeParse(username);
  if (!parsed.success) throw invalid(`SERVICE_ADMIN_USERNAME: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  try {
    checkPasswordRules(password);
  } catch (error) {
    throw invalid(`SERVICE_ADMIN_PASSWORD: ${(error as Error).message.replace(/^password: /, "")}`);
  }
  if ((await countUsers(service.db)) > 0) return false;
  return insertFirstUser(service.db, { id: service.ids.next(), username, passwordHash: await hashPassword(password), role: "admin", nowMs: service.clock.now() });
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
