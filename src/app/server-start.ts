// `jobhouse server start` (CONTRACT §9): in distributed mode, REST, MCP and the web app over
// PostgreSQL and a ClickHouse server, with no workers (those are `worker start` processes); pending
// migrations are applied first, under the migrator's lock. In local mode it is `local start`.

import { readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { createSecureContext } from "node:tls";
import { ConfigError, readApiToken, type Config } from "../core/config.js";
import { invalid } from "../core/errors.js";
import { invoke, operationByName, operations, SYNTHETIC_ADMIN } from "../operations/index.js";
import { buildHttpApp } from "../surfaces/rest/app.js";
import { isLoopbackName } from "../surfaces/rest/request-guards.js";
import { createMetrics } from "./metrics.js";
import { migrateToLatest } from "../store/migrate.js";
import { type OpenedService, openService } from "./context.js";
import { MIN_JWT_SECRET_BYTES } from "../core/access-tokens.js";
import { checkPasswordRules, hashPassword } from "../core/passwords.js";
import { Username } from "../models/auth.js";
import { countUsers, insertFirstUser } from "../store/users.js";
import { WEB_ROOT, runLocalServer } from "./local-start.js";
import { ensurePortFree, listenOrRefuse } from "./listen.js";
import { STOP_BOUND_MS, exitIfStopHangs, listenForStop, stepUnlessStopped } from "./signals.js";
import { checkReachable } from "./store-reach.js";
import { warnMissingJobRoots } from "./processes.js";

/** Where `server start` listens without --host, and the only address of local mode. */
export const DEFAULT_HOST = "127.0.0.1";

export interface ServerStartOptions {
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function runServer(config: Config, options: ServerStartOptions): Promise<number> {
  if (config.mode === "local") {
    // `local start` serves http on 127.0.0.1 only: a public address or HTTPS asked for here was
    // silently dropped, and the operator believed they had it. A loopback name means the same place.
    if (options.tlsCert || options.tlsKey || !isLoopbackName(options.host)) {
      throw invalid(`--host and --tls-cert/--tls-key are for distributed mode: in local mode \`server start\` is \`local start\`, which serves http on ${DEFAULT_HOST} only`);
    }
    return runLocalServer(config, { port: options.port });
  }
  if (config.auth === "users") checkJwtSecret(config);
  const tls = readTls(options);
  await ensurePortFree(options.host, options.port);
  const stop = listenForStop();
  if (!(await stepUnlessStopped(stop, () => checkReachable(config)))) return 0;

  const service = await openService(config, { longRunning: true, createsColumnDatabase: true });
  try {
    // A fresh schema was already migrated while opening (the node lease needs its table): count those too.
    const applied = [...(service.migratedOnOpen ?? []), ...(await migrateToLatest(service.db))];
    if (applied.length > 0) service.log.info(`applied migrations: ${applied.join(", ")}`);
    await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
    if (config.auth === "users") await seedAdmin(service);
    else if (readApiToken() === null) service.log.warn("SERVICE_API_TOKEN is not set: the server is open, every request is allowed");
    const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT, listenHost: options.host, allowedHosts: config.allowedHosts, tls, metrics: createMetrics(service) });
    const port = await listenOrRefuse(app, options.host, options.port);
    service.log.info(`jobhouse ${service.version} listening on ${tls ? "https" : "http"}://${isIPv6(options.host) ? `[${options.host}]` : options.host}:${port} (distributed mode, no workers in this process)`);
    warnMissingJobRoots(service);
    service.log.info(`got ${await stop.signal}: shutting down`);
    exitIfStopHangs(service.log, "the server", STOP_BOUND_MS);
    await app.close();
    return 0;
  } finally {
    await service.close();
  }
}

/** CONTRACT §8: Scheme B needs a signing secret of at least 32 bytes; one line naming the variable otherwise. */
function checkJwtSecret(config: Config): void {
  // A configuration error like any other variable's (exit 2): it was `invalid`, exit 4.
  if (!config.jwtSecret) throw new ConfigError("SERVICE_JWT_SECRET is not set: SERVICE_AUTH=users (the distributed default) signs access tokens with it; set at least 32 random bytes (e.g. openssl rand -base64 48)");
  if (Buffer.byteLength(config.jwtSecret, "utf8") < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(`SERVICE_JWT_SECRET is too short: at least ${MIN_JWT_SECRET_BYTES} bytes (e.g. openssl rand -base64 48)`);
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
    // Half the pair creates nothing: say which half is missing (once an admin exists, the password
    // is rightly removed from the environment, and then nothing is said).
    const half = adminUsername ? "SERVICE_ADMIN_USERNAME is set without SERVICE_ADMIN_PASSWORD, so no admin was created: " : adminPassword ? "SERVICE_ADMIN_PASSWORD is set without SERVICE_ADMIN_USERNAME, so no admin was created: " : "";
    service.log.warn(`${half}no user exists yet: create the first admin with \`jobhouse user create --username U --role admin\` (or set SERVICE_ADMIN_USERNAME and SERVICE_ADMIN_PASSWORD)`);
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
  const pair = { cert: read("--tls-cert", options.tlsCert), key: read("--tls-key", options.tlsKey) };
  checkTlsPair(pair, options.tlsCert, options.tlsKey);
  return pair;
}

/**
 * A file that is not a PEM certificate (or key), or a key that is not the certificate's, is refused
 * in one line naming the flag, before the stores open; HTTPS setup threw OpenSSL's own words
 * ("PEM routines::no start line") as an unexpected failure, after migrating and seeding the admin.
 */
function checkTlsPair(pair: { cert: Buffer; key: Buffer }, certPath: string, keyPath: string): void {
  const reason = (error: unknown) => (error as { reason?: string }).reason ?? (error as Error).message;
  try {
    createSecureContext({ cert: pair.cert });
  } catch (error) {
    throw invalid(`--tls-cert ${certPath} is not a PEM certificate: ${reason(error)}`);
  }
  try {
    createSecureContext({ key: pair.key });
  } catch (error) {
    throw invalid(`--tls-key ${keyPath} is not a PEM private key (unencrypted): ${reason(error)}`);
  }
  try {
    createSecureContext(pair);
  } catch (error) {
    throw invalid(`--tls-key ${keyPath} does not go with --tls-cert ${certPath}: ${reason(error)}`);
  }
}
