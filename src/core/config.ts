// The only reader of environment variables (CONTRACT §1). Everything else receives a frozen Config.

import { statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { MAX_TASK_TIMEOUT_S, MAX_WORKER_CONCURRENCY } from "./worker-limits.js";

export type Mode = "local" | "distributed";
export type AuthScheme = "token" | "users";
export type PreservationModeName = "NONE" | "FULL";

export interface SqlTarget {
  dialect: "sqlite" | "postgres";
  /** File path for SQLite, connection string for PostgreSQL. */
  location: string;
}

export interface ColumnTarget {
  engine: "chdb" | "server";
  /** Data directory for chDB, base URL (credentials included) for a server. */
  location: string;
  database: string;
}

/** Where OpenLineage RunEvents go (docs/OPENLINEAGE.md): a URL, a file of JSON lines, or both. */
export interface OpenLineageTarget {
  /** SERVICE_OPENLINEAGE_URL: each event is POSTed here (Marquez: http://marquez:5000/api/v1/lineage). */
  url: string | null;
  /** SERVICE_OPENLINEAGE_TOKEN: sent as `Authorization: Bearer <token>` with each POST. */
  token: string | null;
  /** SERVICE_OPENLINEAGE_FILE: each event appended as one JSON line. */
  file: string | null;
  /** SERVICE_OPENLINEAGE_NAMESPACE: the namespace of jobhouse's jobs. */
  namespace: string;
}

export interface Config {
  mode: Mode;
  home: string;
  logDir: string;
  sql: SqlTarget;
  ch: ColumnTarget;
  auth: AuthScheme;
  jwtSecret: string | null;
  jwtAccessTtlS: number;
  jwtRefreshTtlS: number;
  adminUsername: string | null;
  adminPassword: string | null;
  taskTimeoutS: number | null;
  jobTtlDays: number;
  defaultPreservationMode: PreservationModeName;
  workerTimeoutS: number;
  /** How long a run_job idempotency key keeps naming its job (SERVICE_IDEMPOTENCY_WINDOW, seconds). */
  idempotencyWindowS: number;
  /** Tasks an in-process or `worker start` worker runs at once. */
  workerConcurrency: number;
  logLevel: "debug" | "info" | "warn" | "error";
  /** SERVICE_LOG_FORMAT: `text` (a line a person reads) or `json` (one object per line, for log shippers). */
  logFormat: "text" | "json";
  /** SERVICE_ALLOWED_HOSTS: Host names a loopback-bound server answers besides loopback ones. */
  allowedHosts: readonly string[];
  /** Folders entrypoint modules may come from: SERVICE_JOBS_PATH, else the working directory. */
  jobRoots: readonly string[];
  /** SERVICE_JOBS_PACKAGES: packages whose modules may be entrypoints. */
  jobPackages: readonly string[];
  /** SERVICE_TASK_MEMORY_MB: heap limit of each task thread. */
  taskMemoryMb: number;
  /** SERVICE_MODULE_LOAD_TIMEOUT: seconds an entrypoint's module may take to load when it is checked. */
  moduleLoadTimeoutS: number;
  /** SERVICE_WORKER_COMMAND: the executable POST /workers starts instead of this installation's binary. */
  workerCommand: string | null;
  /** OpenLineage RunEvents out; null (no cost at all) when neither a URL nor a file is set. */
  openLineage: OpenLineageTarget | null;
}

/** A configuration the service refuses to start with; the message is one line for the user. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

/**
 * The log format asked for, read alone: a process that refuses to start (another variable is
 * wrong, a store does not answer) still writes its refusal as its log shipper expects it.
 */
export function requestedLogFormat(env: Env = process.env): "text" | "json" {
  return nonEmpty(env.SERVICE_LOG_FORMAT)?.toLowerCase() === "json" ? "json" : "text";
}

export function loadConfig(env: Env = process.env): Config {
  const home = absolute(nonEmpty(env.SERVICE_HOME) ?? join(homedir(), ".jobhouse"));
  // A home that is a file was "unexpected failure: EEXIST … mkdir" at the first folder made in it.
  if (isNonDirectory(home)) throw new ConfigError(`SERVICE_HOME ${home} is not a directory: name a folder (it is made if missing)`);
  const sqlRaw = nonEmpty(env.SERVICE_SQL_URL);
  const chRaw = nonEmpty(env.SERVICE_CH_URL);
  const sql = parseSqlUrl(sqlRaw, home);
  const ch = parseChUrl(chRaw, home);

  const localPair = sql.dialect === "sqlite" && ch.engine === "chdb";
  const distributedPair = sql.dialect === "postgres" && ch.engine === "server";
  if (!localPair && !distributedPair) {
    throw new ConfigError(
      `SERVICE_SQL_URL=${describe(sqlRaw)} and SERVICE_CH_URL=${describe(chRaw)} do not form a mode: ` +
        `use sqlite: with chdb: (local) or postgres:// with http(s):// (distributed)`,
    );
  }
  const mode: Mode = localPair ? "local" : "distributed";

  const auth = (nonEmpty(env.SERVICE_AUTH) ?? (mode === "local" ? "token" : "users")) as AuthScheme;
  if (auth !== "token" && auth !== "users") {
    throw new ConfigError(`SERVICE_AUTH must be "token" or "users", got "${env.SERVICE_AUTH}"`);
  }
  if (auth === "users" && mode === "local") {
    throw new ConfigError(`SERVICE_AUTH=users is refused in local mode, where user authentication is disabled`);
  }
  const jwtSecret = nonEmpty(env.SERVICE_JWT_SECRET) ?? null;

  const preservation = (nonEmpty(env.SERVICE_DEFAULT_PRESERVATION_MODE) ?? "NONE").toUpperCase();
  if (preservation !== "NONE" && preservation !== "FULL") {
    throw new ConfigError(`SERVICE_DEFAULT_PRESERVATION_MODE must be NONE or FULL, got "${env.SERVICE_DEFAULT_PRESERVATION_MODE}"`);
  }
  const logFormat = (nonEmpty(env.SERVICE_LOG_FORMAT) ?? "text").toLowerCase();
  if (!["text", "json"].includes(logFormat)) {
    throw new ConfigError(`SERVICE_LOG_FORMAT must be text or json, got "${env.SERVICE_LOG_FORMAT}"`);
  }
  const logLevel = (nonEmpty(env.SERVICE_LOG_LEVEL) ?? "info").toLowerCase();
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new ConfigError(`SERVICE_LOG_LEVEL must be one of debug, info, warn, error`);
  }

  return Object.freeze({
    mode,
    home,
    logDir: absolute(nonEmpty(env.SERVICE_LOG_DIR) ?? join(home, "logs")),
    sql: Object.freeze(sql),
    ch: Object.freeze(ch),
    auth,
    jwtSecret,
    jwtAccessTtlS: positiveInteger(env, "SERVICE_JWT_ACCESS_TTL", 1800),
    jwtRefreshTtlS: positiveInteger(env, "SERVICE_JWT_REFRESH_TTL", 1_209_600),
    adminUsername: nonEmpty(env.SERVICE_ADMIN_USERNAME) ?? null,
    adminPassword: nonEmpty(env.SERVICE_ADMIN_PASSWORD) ?? null,
    taskTimeoutS: positiveNumber(env, "SERVICE_TASK_TIMEOUT", null, MAX_TASK_TIMEOUT_S),
    jobTtlDays: positiveNumber(env, "SERVICE_JOB_TTL_DAYS", 90)!,
    defaultPreservationMode: preservation as PreservationModeName,
    workerTimeoutS: positiveNumber(env, "SERVICE_WORKER_TIMEOUT", 30)!,
    idempotencyWindowS: positiveNumber(env, "SERVICE_IDEMPOTENCY_WINDOW", 86_400)!,
    workerConcurrency: positiveInteger(env, "SERVICE_WORKER_CONCURRENCY", 4, MAX_WORKER_CONCURRENCY),
    logLevel: logLevel as Config["logLevel"],
    logFormat: logFormat as Config["logFormat"],
    allowedHosts: Object.freeze(list(env.SERVICE_ALLOWED_HOSTS, ",").map((host) => host.toLowerCase())),
    jobRoots: Object.freeze(jobRoots(env.SERVICE_JOBS_PATH)),
    jobPackages: Object.freeze(list(env.SERVICE_JOBS_PACKAGES, ",")),
    taskMemoryMb: positiveInteger(env, "SERVICE_TASK_MEMORY_MB", 2048),
    moduleLoadTimeoutS: positiveNumber(env, "SERVICE_MODULE_LOAD_TIMEOUT", 20)!,
    workerCommand: nonEmpty(env.SERVICE_WORKER_COMMAND) ?? null,
    openLineage: parseOpenLineage(env),
  });
}

/**
 * SPEC Scheme A: `SERVICE_API_TOKEN` is read on every request, so rotating it needs no restart.
 * Kept here so this file stays the only reader of the environment.
 */
export function readApiToken(env: Env = process.env): string | null {
  return nonEmpty(env.SERVICE_API_TOKEN) ?? null;
}

/** Colour on a terminal unless NO_COLOR is set to anything (https://no-color.org). */
export function colorWanted(isTty: boolean, env: Env = process.env): boolean {
  return isTty && (env.NO_COLOR === undefined || env.NO_COLOR === "");
}

function parseSqlUrl(raw: string | undefined, home: string): SqlTarget {
  if (raw === undefined) return { dialect: "sqlite", location: join(home, "local.db") };
  if (raw.startsWith("sqlite:")) {
    const path = raw.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    return { dialect: "sqlite", location: path === "" ? join(home, "local.db") : absolute(path) };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    // pg reads a bare % in a password as itself: only whether it parses is checked.
    checkUrl("SERVICE_SQL_URL", raw, { percentChecked: false, socketHost: true });
    return { dialect: "postgres", location: raw };
  }
  return { dialect: "unknown" as "sqlite", location: raw };
}

/**
 * A store URL that parses, with a user, password and path whose percent-encoding is sound; else
 * one line naming the variable and the URL (password hidden), not "unexpected failure: Invalid URL".
 */
function checkUrl(variable: string, raw: string, { percentChecked = true, socketHost = false } = {}): URL {
  let url: URL;
  try {
    // pg takes `user:pw@/db?host=/run/postgresql` (a Unix socket), which has no host to parse.
    url = new URL(socketHost ? raw.replace(/@\//, "@socket/") : raw);
    if (percentChecked) for (const part of [url.username, url.password, url.pathname]) decodeURIComponent(part);
  } catch (error) {
    const why = error instanceof URIError ? "a malformed percent-encoding (write % as %25)" : "it does not parse (a bracket, a port that is not a number?)";
    throw new ConfigError(`${variable}=${redactUrl(raw)} is not a valid URL: ${why}`);
  }
  return url;
}

function parseChUrl(raw: string | undefined, home: string): ColumnTarget {
  if (raw === undefined) return { engine: "chdb", location: join(home, "chdb"), database: "default" };
  if (raw.startsWith("chdb:")) {
    // chdb:<dir>[?database=<name>]: one engine per process, so tests isolate by database.
    const [path = "", query = ""] = raw.slice("chdb:".length).split("?", 2);
    const database = new URLSearchParams(query).get("database") ?? "default";
    return { engine: "chdb", location: path === "" ? join(home, "chdb") : absolute(path), database };
  }
  if (/^https?:\/\//.test(raw)) {
    const url = checkUrl("SERVICE_CH_URL", raw);
    const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, "")) || "default";
    return { engine: "server", location: raw, database };
  }
  return { engine: "unknown" as "chdb", location: raw, database: "default" };
}

function parseOpenLineage(env: Env): OpenLineageTarget | null {
  const url = nonEmpty(env.SERVICE_OPENLINEAGE_URL) ?? null;
  const file = nonEmpty(env.SERVICE_OPENLINEAGE_FILE) ?? null;
  if (url !== null) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new ConfigError(`SERVICE_OPENLINEAGE_URL must be an http(s) URL, got "${redactUrl(url)}"`);
  }
  if (url === null && file === null) return null;
  return Object.freeze({
    url,
    token: nonEmpty(env.SERVICE_OPENLINEAGE_TOKEN) ?? null,
    file: file === null ? null : absolute(file),
    namespace: nonEmpty(env.SERVICE_OPENLINEAGE_NAMESPACE) ?? "jobhouse",
  });
}

/** CONTRACT §4: modules resolve from the working directory unless SERVICE_JOBS_PATH names the roots. */
function jobRoots(raw: string | undefined): string[] {
  const roots = list(raw, ":").map(absolute);
  return roots.length > 0 ? roots : [resolve(".")];
}

/** A separated list, blanks dropped. */
function list(raw: string | undefined, separator: string): string[] {
  return (raw ?? "").split(separator).map((part) => part.trim()).filter((part) => part !== "");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** Whether something other than a folder is at `path` (nothing there is fine: it will be made). */
function isNonDirectory(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function absolute(path: string): string {
  const expanded = path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

function describe(raw: string | undefined): string {
  return raw === undefined ? "(unset)" : redactUrl(raw);
}

/**
 * A store URL fit to print: never echo its password, wherever the URL holds one. The user part
 * ends at the authority's last "@" (pg splits there: an unencoded "@" in the password showed its
 * end), the user may be empty ("//:secret@"), and a query parameter can carry it (`?password=`).
 */
export function redactUrl(url: string): string {
  const userHidden = url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)@/, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return `${scheme}${colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:***`}@`;
  });
  return userHidden.replace(/([?&][^=&#]*(?:pass|pwd|secret|token)[^=&#]*=)[^&#]*/gi, "$1***");
}

/**
 * The number a text of digits only writes, else NaN: "1e3", "0x10", " 80", "0.5" and "" are not
 * what anyone who types a count, a port or seconds means.
 */
export const digitsValue = (text: string): number => (/^\d+$/.test(text) ? Number(text) : NaN);

/**
 * A count or whole seconds: digits only. Math.floor made SERVICE_WORKER_CONCURRENCY=0.5 a worker
 * of no slots (and GET /workers a 500), and a fractional token lifetime a 500 at every login
 * (SPEC: expires_in is integer seconds).
 */
function positiveInteger(env: Env, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = digitsValue(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  if (value > max) throw new ConfigError(`${name} must be at most ${max}, got "${raw}"`);
  return value;
}

function positiveNumber<T extends number | null>(env: Env, name: string, fallback: T, max = Number.MAX_VALUE): number | T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  if (value > max) throw new ConfigError(`${name} must be at most ${max}, got "${raw}"`);
  return value;
}

/** What only a server uses: a worker signs and checks no tokens. */
const SERVER_SECRETS = ["SERVICE_JWT_SECRET", "SERVICE_API_TOKEN", "SERVICE_ADMIN_PASSWORD"];

/**
 * The service's credentials: task code never sees them. Job code is anyone's who may register a
 * job; with the signing secret it could mint admin tokens that outlive its author's account, with
 * the store URLs reach the stores past every check. Its data operations go through the worker.
 */
const SERVICE_CREDENTIALS = [...SERVER_SECRETS, "SERVICE_SQL_URL", "SERVICE_CH_URL", "SERVICE_OPENLINEAGE_TOKEN"];

const environmentWithout = (names: readonly string[]): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  for (const name of names) delete env[name];
  return env;
};

/** The environment a task thread gets (engine/thread-pool.ts): the process's, without the service's credentials. */
export const taskCodeEnvironment = () => environmentWithout(SERVICE_CREDENTIALS);

/** The environment of a worker the server starts (POST /workers): its own, without the server's secrets. */
export const spawnedWorkerEnvironment = () => environmentWithout(SERVER_SECRETS);

/** The folders a bare command name is looked for in (PATH), as spawn looks. */
export const commandSearchPath = (): string[] => (process.env.PATH ?? "").split(":").filter(Boolean);
