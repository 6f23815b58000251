// A store this process cannot reach is refused in one line (CONTRACT §9): which store, at which
// address (password hidden), and what failed; never a stack trace.

import pg from "pg";
import { type Config, redactUrl } from "../core/config.js";
import { type ServiceError, unavailable } from "../core/errors.js";

/** Socket errors, and PostgreSQL's SQLSTATE classes 08 (connection) and 28 (authorization), 3D000 (no such database), 57P03 (starting up). */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);
const isUnreachableCode = (code: string) => SOCKET_CODES.has(code) || /^(08|28)/.test(code) || code === "3D000" || code === "57P03";

type Failure = Error & { code?: unknown; cause?: { code?: unknown; message?: string } };

/** A TLS handshake that failed: https:// to a server that speaks http, or a certificate not trusted. */
const isTlsCode = (code: string) => code === "EPROTO" || /^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code);
const failureCodes = (e: Failure | undefined) => [e?.code, e?.cause?.code].filter((c) => c !== undefined).map(String);
const isTlsFailure = (e: Failure | undefined) => failureCodes(e).some(isTlsCode) || /SSL routines/.test(`${e?.message ?? ""} ${e?.cause?.message ?? ""}`);

/**
 * ClickHouse would not let us in: 192 unknown user, 193 wrong password, 194 password required, 516
 * authentication failed. 18.16 answers in words the client does not parse ("Code: 193,
 * e.displayText() = DB::Exception: Wrong password for user default, e.what() = DB::Exception").
 */
const CLICKHOUSE_LOGIN_CODES = new Set(["192", "193", "194", "516"]);
const isClickHouseLoginRefusal = (e: Failure | undefined) =>
  [...failureCodes(e), /^Code: (\d+)\b/.exec(e?.message ?? "")?.[1]].some((code) => code !== undefined && CLICKHOUSE_LOGIN_CODES.has(code));
/** The reason in ClickHouse's own message, without its code and exception class. */
const clickHouseWords = (text: string): string | undefined => /DB::Exception: (.*?)(?:, e\.what\(\) = \S+)?\s*$/m.exec(text)?.[1];

/** Whether an error says the store did not answer (or would not let us in), not that a statement failed. */
export function isConnectionFailure(error: unknown): boolean {
  const e = error as Failure | undefined;
  return failureCodes(e).some(isUnreachableCode) || isTlsFailure(e) || isClickHouseLoginRefusal(e) || /timeout exceeded when trying to connect|Connection terminated unexpectedly|does not support SSL connections/i.test(e?.message ?? "");
}

/** The shortest telling reason: the error code where there is one (ECONNREFUSED), else its message. */
export function failureReason(error: unknown): string {
  const e = error as Failure | undefined;
  const code = e?.cause?.code ?? e?.code;
  if (typeof code === "string" && SOCKET_CODES.has(code)) return code;
  // OpenSSL's words run over two lines ("…:ssl3_get_record:wrong version number:…/ssl3_record.c:350:\n").
  if (isTlsFailure(e)) {
    const text = `${e?.cause?.message ?? ""} ${e?.message ?? ""}`;
    if (/wrong version number|WRONG_VERSION_NUMBER/.test(text) || failureCodes(e).includes("ERR_SSL_WRONG_VERSION_NUMBER")) return "TLS handshake failed: it does not speak TLS (http:// rather than https://?)";
    return `TLS handshake failed: ${failureCodes(e).find(isTlsCode) ?? text.trim().split("\n")[0]}`;
  }
  if (isClickHouseLoginRefusal(e)) return clickHouseWords(e?.message ?? "") ?? (e?.message ?? "").trim();
  // fetch says only "fetch failed"; its cause says why ("bad port", a TLS error, …).
  return e?.cause?.message || e?.message || String(error);
}

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
