// Whether an error says a store did not answer (a refused or dropped connection, a failed TLS
// handshake, a login refused), as opposed to a statement that failed, and its shortest telling
// reason. Pure facts about errors of pg, the ClickHouse client and fetch: no store is touched.

/**
 * Socket errors, and PostgreSQL's SQLSTATE classes 08 (connection) and 28 (authorization), 3D000
 * (no such database), 57P01-57P03 (the connection was ended by an administrator or a shutdown, or
 * the server is starting up).
 */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);
const isUnreachableCode = (code: string) => SOCKET_CODES.has(code) || /^(08|28)/.test(code) || code === "3D000" || /^57P0[123]$/.test(code);

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
export const clickHouseWords = (text: string): string | undefined => /DB::Exception: (.*?)(?:, e\.what\(\) = \S+)?\s*$/m.exec(text)?.[1];

/** Whether an error says the store did not answer (or would not let us in), not that a statement failed. */
export function isConnectionFailure(error: unknown): boolean {
  const e = error as Failure | undefined;
  return failureCodes(e).some(isUnreachableCode) || isTlsFailure(e) || isClickHouseLoginRefusal(e) || /timeout exceeded when trying to connect|Connection terminated|is not queryable|does not support SSL connections|socket hang up/i.test(e?.message ?? "");
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
