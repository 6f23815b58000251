// Service errors: the kinds an operation may raise, and the one table that maps each kind to
// its HTTP status, title and CLI exit code (SPEC "Errors", CONTRACT §6/§7).

import { failureReason, isConnectionFailure } from "./store-failures.js";

export type ErrorKind =
  | "not_found"
  | "conflict"
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "too_many_requests"
  | "unavailable"
  | "internal";

export interface ErrorKindInfo {
  status: number;
  title: string;
  exitCode: number;
}

export const ERROR_KINDS: Readonly<Record<ErrorKind, ErrorKindInfo>> = {
  not_found: { status: 404, title: "Not Found", exitCode: 1 },
  conflict: { status: 409, title: "Conflict", exitCode: 3 },
  invalid: { status: 422, title: "Unprocessable Entity", exitCode: 4 },
  unauthorized: { status: 401, title: "Unauthorized", exitCode: 5 },
  forbidden: { status: 403, title: "Forbidden", exitCode: 5 },
  too_many_requests: { status: 429, title: "Too Many Requests", exitCode: 5 },
  unavailable: { status: 503, title: "Service Unavailable", exitCode: 10 },
  internal: { status: 500, title: "Internal Server Error", exitCode: 10 },
};

/** An expected failure of an operation; anything else thrown is a defect. */
export class ServiceError extends Error {
  readonly kind: ErrorKind;
  /** Lowercase machine-readable code, e.g. `job_terminal`; defaults to the kind. */
  readonly code: string;

  /** Seconds the caller should wait before trying again (HTTP Retry-After). */
  readonly retryAfterS?: number;

  constructor(kind: ErrorKind, code: string, detail: string, retryAfterS?: number) {
    super(detail);
    this.name = "ServiceError";
    this.kind = kind;
    this.code = code;
    if (retryAfterS !== undefined) this.retryAfterS = retryAfterS;
  }

  get detail(): string {
    return this.message;
  }

  get status(): number {
    return ERROR_KINDS[this.kind].status;
  }
}

export const notFound = (detail: string, code = "not_found") => new ServiceError("not_found", code, detail);
export const conflict = (detail: string, code = "conflict") => new ServiceError("conflict", code, detail);
export const invalid = (detail: string, code = "invalid") => new ServiceError("invalid", code, detail);
export const unauthorized = (detail: string) => new ServiceError("unauthorized", "unauthorized", detail);
export const forbidden = (detail: string, code = "forbidden") => new ServiceError("forbidden", code, detail);
export const tooManyRequests = (detail: string, retryAfterS: number) => new ServiceError("too_many_requests", "too_many_requests", detail, retryAfterS);
export const unavailable = (detail: string, code = "unavailable", retryAfterS?: number) => new ServiceError("unavailable", code, detail, retryAfterS);

export const isServiceError = (e: unknown): e is ServiceError => e instanceof ServiceError;

/** The wire form of an error (SPEC "Problem"). */
export interface ProblemBody {
  title: string;
  status: number;
  detail: string;
  code: string;
  /** Seconds to wait before trying again: sent as the Retry-After header, and in the body. */
  retry_after?: number;
}

/**
 * The one mapping from anything thrown to its wire form (REST, MCP and the CLI's messages): a
 * ServiceError as itself; anything else is a defect, logged with its stack and answered as
 * `internal` without internals.
 */
export function toProblem(error: unknown, log?: { error(message: string): void }): ProblemBody {
  // Not a defect: the surface reports it as the 503 it is (REST logs it once a minute).
  error = storeOutage(error) ?? error;
  if (!isServiceError(error)) {
    log?.error(`unexpected error: ${(error as Error)?.stack ?? String(error)}`);
    return internalProblem();
  }
  const info = ERROR_KINDS[error.kind];
  const problem: ProblemBody = { title: info.title, status: info.status, detail: error.detail, code: error.code };
  if (error.retryAfterS !== undefined) problem.retry_after = error.retryAfterS;
  return problem;
}

/**
 * A store that stopped answering while a request ran, as the 503 it is: nothing is wrong with the
 * request or the service, and trying again once the store is back will work. Undefined for any
 * other error.
 */
export function storeOutage(error: unknown): ServiceError | undefined {
  if (isServiceError(error) || !isConnectionFailure(error)) return undefined;
  return unavailable(`a store did not answer (${failureReason(error)}): try again shortly (GET /ready says which store)`, "store_unavailable", 5);
}

/** Exit codes of the CLI that no error kind carries (CONTRACT §7; the kinds' own are in ERROR_KINDS). */
export const EXIT_CODES = {
  ok: 0,
  /** Bad arguments or options, or a configuration the service refuses. */
  usage: 2,
  /** `run-job --wait` saw the job fail or be cancelled. */
  jobNotCompleted: 6,
} as const;

/** A defect answered without leaking internals; the caller logs the original. */
const internalProblem = (): ProblemBody => ({
  title: ERROR_KINDS.internal.title,
  status: 500,
  detail: "An unexpected error occurred; it has been logged.",
  code: "internal",
});

/** The kind behind an HTTP status, for clients that receive Problems (the CLI's HTTP caller). */
export function kindForStatus(status: number): ErrorKind {
  const found = (Object.keys(ERROR_KINDS) as ErrorKind[]).find((kind) => ERROR_KINDS[kind].status === status);
  return found ?? (status >= 500 ? "internal" : "invalid");
}
