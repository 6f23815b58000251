// The browser's API client (SPEC "Browser client behavior"): the bearer header on every request; on a
// 401 one refresh and one retry, otherwise the session is cleared and the app shows its login view.
// The access token lives in memory only, the refresh token in local storage. Nothing here touches the
// DOM, so the whole flow runs under test with a fake fetch and storage.

import type { TokenPair } from "../../../src/models/index.js";

export type AuthScheme = "none" | "token" | "users";

/** A Problem answer (or a network failure, status 0) as an Error the views can show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface ApiClientOptions {
  fetch: typeof fetch;
  storage: KeyValueStore;
  /** Runs fn while no other tab of this origin refreshes (Web Locks): a refresh token is single-use. */
  exclusive?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The refresh token as every tab sees it at once (see shared-token.ts); local storage alone without it. */
  shared?: SharedToken;
}

/** A refresh token store every tab reads consistently: undefined when it holds nothing yet. */
export interface SharedToken {
  read(): Promise<string | null | undefined>;
  write(token: string | null): Promise<void>;
}

export const REFRESH_TOKEN_KEY = "jobhouse.refresh_token";

/**
 * A body sent as written: JSON the person typed goes to the server as text, so the server judges
 * what they wrote. Parsed and serialized again, 1e400 became null, 1e-400 0 and 9007199254740993
 * …992, all sent without a word; the server refuses each of them, given the text.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
export const API_TOKEN_KEY = "jobhouse.api_token";
/** How long a login waits for another tab's refresh to finish before it stores its tokens anyway. */
const LOCK_PATIENCE_MS = 3_000;
const API = "/api/v0";

type Listener = () => void;

export interface ApiClient {
  /** Set once /health told which scheme the server uses. */
  setScheme(scheme: AuthScheme): void;
  scheme(): AuthScheme | null;
  /** True when a request could carry a credential the server may accept. */
  hasCredentials(): boolean;
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Opens a GET that answers a stream (the event stream): the response once it is 200, else an ApiError. */
  stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response>;
  login(username: string, password: string): Promise<void>;
  useApiToken(token: string): Promise<void>;
  logout(): Promise<void>;
  /**
   * Another tab signed out (or lost the session): the stored credential is gone, and this tab's
   * access token goes with it rather than living on until it expires.
   */
  signedOutElsewhere(): void;
  /** True after the server refused this tab's session (expired, revoked), until the next sign-in or sign-out. */
  sessionEnded(): boolean;
  /** Called whenever the session ends or begins. */
  subscribe(listener: Listener): () => void;
  /** Bumped on every sign-in and sign-out (for useSyncExternalStore). */
  version(): number;
  /** Since when (ms) the server has not answered at all, or null while it answers. */
  unreachableSince(): number | null;
  /** Called when the server stops answering or answers again. */
  subscribeReachability(listener: Listener): () => void;
}

async function problemOf(response: Response): Promise<ApiError> {
  let code = "http_" + response.status;
  let detail = response.statusText || `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { code?: unknown; detail?: unknown };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.detail === "string") detail = body.detail;
  } catch {
    // Not a Problem body: keep the status line.
  }
  return new ApiError(response.status, code, detail);
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const { storage } = options;
  const exclusive = options.exclusive ?? (<T,>(fn: () => Promise<T>) => fn());
  // The shared store is an aid: when it fails, local storage is what there is.
  const readShared = async () => (options.shared ? await options.shared.read().catch(() => undefined) : undefined);
  const writeShared = async (token: string | null) => void (await options.shared?.write(token).catch(() => undefined));
  let scheme: AuthScheme | null = null;
  let accessToken: string | null = null;
  let refreshing: Promise<boolean> | null = null;
  let version = 0;
  const listeners = new Set<Listener>();
  let unreachableSince: number | null = null;
  const reachabilityListeners = new Set<Listener>();
  const reachable = (answered: boolean) => {
    if (answered === (unreachableSince === null)) return;
    unreachableSince = answered ? null : Date.now();
    for (const listener of reachabilityListeners) listener();
  };

  const changed = () => {
    version++;
    for (const listener of listeners) listener();
  };

  const bearer = (): string | null => {
    if (scheme === "users") return accessToken;
    if (scheme === "token") return storage.getItem(API_TOKEN_KEY);
    return null;
  };

  async function send(method: string, path: string, body: unknown, extra: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json", ...extra.headers };
    const token = bearer();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      const response = await options.fetch(path.startsWith("/health") ? path : API + path, {
        method,
        headers,
        ...(body !== undefined ? { body: body instanceof JsonText ? body.text : JSON.stringify(body) } : {}),
        ...(extra.signal ? { signal: extra.signal } : {}),
      });
      reachable(true);
      return response;
    } catch (error) {
      // A request this page gave up on (the event stream closed) says nothing about the server.
      if (!extra.signal?.aborted) reachable(false);
      throw new ApiError(0, "network", `the server did not answer (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** The server refused the session this tab had (see sessionEnded). */
  let ended = false;

  /** Forgets every credential this tab and the shared store hold. */
  function forget() {
    accessToken = null;
    storage.removeItem(REFRESH_TOKEN_KEY);
    storage.removeItem(API_TOKEN_KEY);
    void writeShared(null);
  }

  function signOutLocally() {
    const had = accessToken !== null || storage.getItem(REFRESH_TOKEN_KEY) !== null || storage.getItem(API_TOKEN_KEY) !== null;
    forget();
    if (had) {
      ended = true;
      changed();
    }
  }

  /** Keeps a new pair: the access token in memory, the refresh token in local storage and the shared store. */
  async function keep(pair: TokenPair) {
    accessToken = pair.access_token;
    storage.setItem(REFRESH_TOKEN_KEY, pair.refresh_token);
    await writeShared(pair.refresh_token);
  }

  /** One refresh at a time in this tab, and across tabs through `exclusive`; true when it worked. */
  function refreshOnce(): Promise<boolean> {
    refreshing ??= exclusive(async () => {
      // Read inside the lock: another tab may have rotated the token while this one waited, and
      // its write may not have reached this tab's local storage yet; the shared store has it.
      const shared = await readShared();
      const refreshToken = shared === undefined ? storage.getItem(REFRESH_TOKEN_KEY) : shared;
      if (!refreshToken) return false;
      const response = await send("POST", "/auth/refresh", { refresh_token: refreshToken });
      if (!response.ok) return false;
      // Committed to the shared store before the lock is released: the next tab's turn reads it.
      await keep((await response.json()) as TokenPair);
      return true;
    })
      .catch(() => false)
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  }

  /** Sends, refreshes once on a 401 (Scheme B) and sends again; a 401 after that signs out. */
  async function authorized(method: string, path: string, body: unknown, extra: Parameters<typeof send>[3] = {}): Promise<Response> {
    // A tab that holds a refresh token but no access token yet (a reload, a new tab) refreshes
    // first, rather than sending a request it knows will be refused.
    const refreshFirst = scheme === "users" && accessToken === null && storage.getItem(REFRESH_TOKEN_KEY) !== null;
    if (refreshFirst) await refreshOnce();
    const sentWith = accessToken;
    let response = await send(method, path, body, extra);
    // A 401 for a token that a refresh replaced while this request was out (requests in flight
    // together, answered apart) is sent again with the new one: a second refresh would only rotate
    // the pair once more.
    if (response.status === 401 && scheme === "users" && !refreshFirst && (accessToken !== sentWith || (await refreshOnce()))) {
      response = await send(method, path, body, extra);
    }
    if (response.status === 401) {
      const problem = await problemOf(response);
      signOutLocally();
      throw problem;
    }
    if (!response.ok) throw await problemOf(response);
    return response;
  }

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await authorized(method, path, body);
    // A 204, and the 202 of POST /workers, carry no body.
    const text = await response.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  return {
    setScheme(next) {
      scheme = next;
    },
    scheme: () => scheme,
    hasCredentials() {
      if (scheme === "none") return true;
      if (scheme === "token") return storage.getItem(API_TOKEN_KEY) !== null;
      return accessToken !== null || storage.getItem(REFRESH_TOKEN_KEY) !== null;
    },
    request,
    stream: (path, headers, signal) => authorized("GET", path, undefined, { headers: { accept: "text/event-stream", ...headers }, signal }),
    async login(username, password) {
      ended = false;
      const response = await send("POST", "/auth/login", { username, password });
      if (!response.ok) throw await problemOf(response);
      const pair = (await response.json()) as TokenPair;
      // Stored inside the lock, so a refresh another tab has under way lands first and this
      // session's token last; but not waiting for ever on a refresh whose server never answers.
      // Once only: a late second store would put back a token a refresh has since rotated.
      let stored = false;
      const store = async () => {
        if (stored) return;
        stored = true;
        await keep(pair);
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const patience = new Promise<void>((resolve) => (timer = setTimeout(resolve, LOCK_PATIENCE_MS))).then(store);
      await Promise.race([exclusive(store), patience]);
      clearTimeout(timer);
      changed();
    },
    async useApiToken(token) {
      ended = false;
      storage.setItem(API_TOKEN_KEY, token);
      // Proves the token before the app believes it: a wrong one ends here with a 401.
      await request("GET", "/auth/me");
      changed();
    },
    async logout() {
      ended = false;
      const refreshToken = storage.getItem(REFRESH_TOKEN_KEY);
      try {
        if (scheme === "users" && refreshToken) await send("POST", "/auth/logout", { refresh_token: refreshToken });
      } finally {
        forget();
        changed();
      }
    },
    sessionEnded: () => ended,
    signedOutElsewhere() {
      if (accessToken === null && scheme !== "token") return;
      accessToken = null;
      changed();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    unreachableSince: () => unreachableSince,
    subscribeReachability(listener) {
      reachabilityListeners.add(listener);
      return () => reachabilityListeners.delete(listener);
    },
    version: () => version,
  };
}
