// One mapping from anything thrown to a Problem response (SPEC "Errors" rule 1).

import type { FastifyReply } from "fastify";
import { type ProblemBody, ServiceError, isServiceError, toProblem } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function sendProblem(reply: FastifyReply, problem: ProblemBody): FastifyReply {
  if (problem.status === 401) reply.header("WWW-Authenticate", "Bearer");
  if (problem.retry_after !== undefined) reply.header("Retry-After", String(problem.retry_after));
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/** The code of the parser's refusal of a compressed body (read as it was, it was taken as JSON). */
export const CONTENT_ENCODING_REFUSED = "JH_CONTENT_ENCODING";

/** A body sent with a Content-Encoding: the server takes JSON as it is, uncompressed. */
export const contentEncodingRefusal = (encoding: string) =>
  Object.assign(new Error(`Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted: send the JSON body uncompressed`), { statusCode: 415, code: CONTENT_ENCODING_REFUSED });

/** A body declared in another character set than UTF-8 (RFC 8259: JSON is UTF-8; it was read as UTF-8 all the same). */
export const charsetRefusal = (charset: string) =>
  Object.assign(new Error(`charset ${JSON.stringify(charset.slice(0, 40))} is not accepted: send the JSON body as UTF-8`), { statusCode: 415, code: CONTENT_ENCODING_REFUSED });

/** A body whose bytes are not UTF-8: decoded anyway, each bad byte became U+FFFD and was stored so. A malformed body, as bad JSON is. */
export const notUtf8Refusal = () => Object.assign(new SyntaxError("the body is not valid UTF-8 (JSON must be sent as UTF-8)"), { statusCode: 400 });

/** Fastify's own request errors (bad JSON, wrong content type, body too large) as Problems. */
function fromFrameworkError(error: { statusCode?: number; code?: string; message: string }): ProblemBody | null {
  const status = error.statusCode;
  if (status === undefined || status < 400 || status >= 500) return null;
  if (status === 413) return { title: "Payload Too Large", status, detail: error.message, code: "payload_too_large" };
  if (status === 415) {
    // Fastify says only its title; what a caller needs is what to send (curl -d sends a form).
    const detail = error.code === CONTENT_ENCODING_REFUSED ? error.message : "the request body must be JSON: send it with Content-Type: application/json";
    return { title: "Unsupported Media Type", status, detail, code: "unsupported_media_type" };
  }
  if (status === 404) return { title: "Not Found", status, detail: error.message, code: "not_found" };
  // A malformed JSON body is invalid input like any other (CONTRACT §2: Problem 422).
  return toProblem(new ServiceError("invalid", "invalid", `request body: ${error.message}`));
}

export function problemFor(error: unknown, log: Logger): ProblemBody {
  const framework = isServiceError(error) ? null : fromFrameworkError(error as { statusCode?: number; message: string });
  // A 500 is a defect: toProblem logs the stack and tells the caller nothing internal.
  return framework ?? toProblem(error, log);
}

/** The router's refusals (fastify's frameworkErrors): a path segment too long, a malformed URL. */
export function routerProblem(error: { code?: string; message: string }, log: Logger): ProblemBody {
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return { title: "URI Too Long", status: 414, detail: "a path segment is longer than the 500 characters any name or id may have", code: "uri_too_long" };
  }
  if (error.code === "FST_ERR_BAD_URL") return { title: "Bad Request", status: 400, detail: "the path is not a valid URL (a malformed percent-encoding)", code: "bad_url" };
  return problemFor(error, log);
}
