// Calls an operation over HTTP using its REST address: for the CLI while a local server holds chDB.

import { ServiceError, invalid, kindForStatus, unavailable } from "../core/errors.js";
import { type AnyOperation, fillPath, mountedPath, parseInput } from "../operations/index.js";
import { failureReason } from "../core/store-failures.js";

/** The header (and its value) the local server accepts from its own CLI instead of a token. */
export interface LocalCredential {
  header: string;
  secret: string;
}

export async function callOverHttp(baseUrl: string, op: AnyOperation, input: Record<string, unknown>, credential?: LocalCredential): Promise<unknown> {
  const http = op.http;
  if (!http) throw new ServiceError("invalid", "invalid", `${op.name} has no HTTP address`);
  // Checked as the server would check it, before the path is built: an empty ref made the path
  // /jobs//cancel, answered "no route" (404) where every other surface says what is wrong (422).
  parseInput(op, input);
  const rest = { ...input };
  const path = fillPath(mountedPath(http), (name) => {
    const value = encodeURIComponent(String(rest[name] ?? ""));
    // Every URL resolves a `.` or `..` segment away, encoded or not (POST /jobs/../cancel is /cancel).
    if (/^(?:\.|%2e){1,2}$/i.test(value)) throw invalid(`${name} "${String(rest[name])}" cannot travel in a URL path: . and .. are path steps there`);
    delete rest[name];
    return value;
  });
  const url = new URL(path, baseUrl);
  const init: RequestInit = { method: http.method, headers: {} as Record<string, string> };
  if (http.method === "GET" || http.method === "DELETE") {
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined) url.searchParams.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
    }
  } else {
    init.body = JSON.stringify(rest);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  if (credential) (init.headers as Record<string, string>)[credential.header] = credential.secret;

  const response = await fetch(url, init).catch((error: unknown) => {
    // server.json names a live process that does not answer there (hung, or its pid taken by
    // another process after a crash): one line saying so, not "unexpected failure: fetch failed".
    throw unavailable(`the local server recorded in server.json at ${baseUrl} does not answer (${failureReason(error)}): restart it with \`jobhouse local start\``, "server_unreachable");
  });
  const text = await response.text();
  if (!response.ok) {
    let problem: { code?: string; detail?: string } = {};
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      // Not a Problem body; report the status.
    }
    const kind = kindForStatus(response.status);
    throw new ServiceError(kind, problem.code ?? kind, problem.detail ?? `HTTP ${response.status} from ${url}`);
  }
  return text === "" ? undefined : JSON.parse(text);
}
