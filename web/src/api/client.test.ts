// The browser's auth client against a fake server: bearer on every request, one refresh and one
// retry on a 401, one refresh for many concurrent 401s, sign-out when refreshing fails, logout.

import { describe, expect, it } from "vitest";
import { API_TOKEN_KEY, ApiError, JsonText, REFRESH_TOKEN_KEY, createApiClient } from "./client.js";

class MemoryStorage {
  values = new Map<string, string>();
  getItem = (k: string) => this.values.get(k) ?? null;
  setItem = (k: string, v: string) => void this.values.set(k, v);
  removeItem = (k: string) => void this.values.delete(k);
}

interface Call {
  method: string;
  url: string;
  authorization: string | null;
  body: unknown;
}

/** A server whose valid access token is `access-<n>` for the newest n; refresh tokens are single-use. */
function fakeServer({ everyAccessValid = false } = {}) {
  const calls: Call[] = [];
  let generation = 1;
  let validRefresh = new Set(["refresh-1"]);
  let refreshWorks = true;
  const json = (status: number, body: unknown) => new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    const call = { method: init?.method ?? "GET", url: String(url), authorization: headers.get("authorization"), body };
    calls.push(call);
    await new Promise((r) => setTimeout(r, 1));
    if (call.url.endsWith("/auth/refresh")) {
      if (!refreshWorks || !validRefresh.has(body.refresh_token)) return json(401, { code: "unauthorized", detail: "invalid refresh token" });
      generation++;
      validRefresh = new Set([`refresh-${generation}`]);
      return json(200, { access_token: `access-${generation}`, refresh_token: `refresh-${generation}`, token_type: "bearer", expires_in: 60 });
    }
    if (call.url.endsWith("/auth/login")) {
      if (body.password !== "right password") return json(401, { code: "unauthorized", detail: "invalid username or password" });
      return json(200, { access_token: `access-${generation}`, refresh_token: `refresh-${generation}`, token_type: "bearer", expires_in: 60 });
    }
    if (call.url.endsWith("/auth/logout")) {
      validRefresh.delete(body.refresh_token);
      return json(204, null);
    }
    // Real access tokens stay valid until they expire; by default only the newest is, to force refreshes.
    const valid = everyAccessValid ? /^Bearer access-\d+$/.test(call.authorization ?? "") : call.authorization === `Bearer access-${generation}`;
    if (!valid) return json(401, { code: "unauthorized", detail: "invalid or expired access token" });
    if (call.url.endsWith("/jobs/404")) return json(404, { code: "not_found", detail: "job 404 not found" });
    // start_worker: 202 Accepted with a Location and no body.
    if (call.method === "POST" && call.url.endsWith("/workers")) return new Response(null, { status: 202, headers: { location: "/api/v0/workers" } });
    return json(200, { ok: true, url: call.url });
  };
  return {
    calls,
    fetch: fetch as typeof globalThis.fetch,
    expireAccess: () => void generation++,
    breakRefresh: () => void (refreshWorks = false),
  };
}

async function signedInClient() {
  const server = fakeServer();
  const storage = new MemoryStorage();
  const client = createApiClient({ fetch: server.fetch, storage });
  client.setScheme("users");
  await client.login("root", "right password");
  return { server, storage, client };
}

/** One lock for every "tab": what navigator.locks gives the browser's tabs. */
function sharedLock() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T,>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

describe("the browser API client", () => {
  // Found by trying the product: tabs opened together each refreshed in turn, but a tab's local
  // storage could still hold the token another tab had just rotated; presenting it revoked the
  // session in every tab. The shared store (IndexedDB in the browser) is read inside the lock.
  it("signs in even while another tab's refresh holds the lock and never ends", async () => {
    const server = fakeServer();
    const storage = new MemoryStorage();
    let latest: string | null | undefined;
    const shared = { read: async () => latest, write: async (token: string | null) => void (latest = token) };
    const client = createApiClient({ fetch: server.fetch, storage, exclusive: () => new Promise<never>(() => undefined), shared });
    client.setScheme("users");
    const started = Date.now();
    await client.login("root", "right password");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(storage.getItem(REFRESH_TOKEN_KEY)).toBe("refresh-1");
    expect(latest).toBe("refresh-1");
  });

  it("lets tabs refresh in turn when local storage reaches them late", async () => {
    const server = fakeServer({ everyAccessValid: true });
    const exclusive = sharedLock();
    let latest: string | null | undefined;
    const shared = { read: async () => latest, write: async (token: string | null) => void (latest = token) };
    // Each tab has its own copy of local storage, which never hears of the other's writes.
    const tabs = [new MemoryStorage(), new MemoryStorage(), new MemoryStorage()].map((storage) => ({
      storage,
      client: createApiClient({ fetch: server.fetch, storage, exclusive, shared }),
    }));
    tabs[0]!.client.setScheme("users");
    await tabs[0]!.client.login("root", "right password");
    for (const tab of tabs.slice(1)) {
      tab.client.setScheme("users");
      tab.storage.setItem(REFRESH_TOKEN_KEY, tabs[0]!.storage.getItem(REFRESH_TOKEN_KEY)!);
    }
    // The new tabs hold no access token: each refreshes, in turn, and all of them stay signed in.
    const answers = await Promise.all(tabs.slice(1).map((tab) => tab.client.request<{ ok: boolean }>("GET", "/jobs")));
    expect(answers.map((a) => a.ok)).toEqual([true, true]);
    const refreshes = server.calls.filter((c) => c.url.endsWith("/auth/refresh")).map((c) => (c.body as { refresh_token: string }).refresh_token);
    expect(refreshes).toEqual(["refresh-1", "refresh-2"]);
    // No request was sent without a bearer first: a tab with a refresh token refreshes before asking.
    expect(server.calls.filter((c) => c.url.endsWith("/jobs")).every((c) => c.authorization !== null)).toBe(true);
  });

  it("keeps the access token in memory only and sends it as the bearer", async () => {
    const { server, storage, client } = await signedInClient();
    expect([...storage.values.keys()]).toEqual([REFRESH_TOKEN_KEY]);
    await client.request("GET", "/jobs");
    expect(server.calls.at(-1)).toMatchObject({ url: "/api/v0/jobs", authorization: "Bearer access-1" });
  });

  it("refreshes once on a 401 and retries the request with the new token", async () => {
    const { server, storage, client } = await signedInClient();
    server.expireAccess();
    const answer = await client.request<{ ok: boolean }>("GET", "/jobs");
    expect(answer.ok).toBe(true);
    expect(server.calls.map((c) => c.url)).toEqual(["/api/v0/auth/login", "/api/v0/jobs", "/api/v0/auth/refresh", "/api/v0/jobs"]);
    expect(storage.getItem(REFRESH_TOKEN_KEY)).toBe("refresh-3");
  });

  it("makes one refresh for many requests that fail together", async () => {
    const { server, client } = await signedInClient();
    server.expireAccess();
    await Promise.all([client.request("GET", "/jobs"), client.request("GET", "/workers"), client.request("GET", "/objects")]);
    expect(server.calls.filter((c) => c.url.endsWith("/auth/refresh"))).toHaveLength(1);
  });

  it("signs out and tells its listeners when the refresh fails too", async () => {
    const { server, storage, client } = await signedInClient();
    let told = 0;
    client.subscribe(() => void told++);
    server.expireAccess();
    server.breakRefresh();
    await expect(client.request("GET", "/jobs")).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect(storage.getItem(REFRESH_TOKEN_KEY)).toBeNull();
    expect(client.hasCredentials()).toBe(false);
    expect(told).toBe(1);
  });

  it("takes an answer without a body (202 of POST /workers) as a success", async () => {
    const { client } = await signedInClient();
    await expect(client.request("POST", "/workers", {})).resolves.toBeUndefined();
  });

  // Found by trying the web app: the run-now form parsed the arguments and sent them serialized
  // again, so 1e400 went as null and 9007199254740993 as …992, and the server never saw them.
  it("sends a JsonText body as written", async () => {
    const { server, client } = await signedInClient();
    let sent: BodyInit | null | undefined;
    const spy = createApiClient({ fetch: async (url, init) => ((sent = init?.body), server.fetch(url, init)), storage: new MemoryStorage() });
    spy.setScheme("token");
    await spy.request("POST", "/jobs:run", new JsonText('{"name":"x","kwargs":{"k":1e400,"id":9007199254740993}}')).catch(() => undefined);
    expect(sent).toBe('{"name":"x","kwargs":{"k":1e400,"id":9007199254740993}}');
    expect(client.hasCredentials()).toBe(true);
  });

  it("turns a Problem into an ApiError without signing out", async () => {
    const { client } = await signedInClient();
    const error = await client.request("GET", "/jobs/404").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: "not_found", detail: "job 404 not found" });
    expect(client.hasCredentials()).toBe(true);
  });

  it("reports a failed login and keeps nothing", async () => {
    const server = fakeServer();
    const storage = new MemoryStorage();
    const client = createApiClient({ fetch: server.fetch, storage });
    client.setScheme("users");
    await expect(client.login("root", "wrong")).rejects.toMatchObject({ status: 401 });
    expect(storage.values.size).toBe(0);
    expect(client.hasCredentials()).toBe(false);
  });

  it("logs out: revokes the refresh token on the server and forgets it", async () => {
    const { server, storage, client } = await signedInClient();
    await client.logout();
    expect(server.calls.at(-1)).toMatchObject({ url: "/api/v0/auth/logout", body: { refresh_token: "refresh-1" } });
    expect(storage.values.size).toBe(0);
    expect(client.hasCredentials()).toBe(false);
  });

  it("under the API token scheme sends the stored token and never refreshes", async () => {
    const server = fakeServer();
    const storage = new MemoryStorage();
    const client = createApiClient({ fetch: server.fetch, storage });
    client.setScheme("token");
    expect(client.hasCredentials()).toBe(false);
    storage.setItem(API_TOKEN_KEY, "access-1");
    await client.request("GET", "/jobs");
    expect(server.calls.at(-1)?.authorization).toBe("Bearer access-1");
    server.expireAccess();
    await expect(client.request("GET", "/jobs")).rejects.toMatchObject({ status: 401 });
    expect(server.calls.some((c) => c.url.endsWith("/auth/refresh"))).toBe(false);
    expect(storage.getItem(API_TOKEN_KEY)).toBeNull();
  });

  it("answers a network failure as status 0 with the reason", async () => {
    const client = createApiClient({ fetch: (async () => Promise.reject(new TypeError("Failed to fetch"))) as typeof fetch, storage: new MemoryStorage() });
    client.setScheme("none");
    await expect(client.request("GET", "/jobs")).rejects.toMatchObject({ status: 0, code: "network" });
  });
});
