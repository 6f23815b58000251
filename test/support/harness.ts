// A running service for cross-layer tests: a fresh backend, the HTTP app (REST requests through
// fastify's inject; a loopback port only once something needs a socket: the MCP SDK client, raw
// requests), and the CLI run in-process against the same stores.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FastifyInstance } from "fastify";
import { runCli } from "../../src/app/cli.js";
import { createMetrics } from "../../src/app/metrics.js";
import { openService, type OpenedService } from "../../src/app/context.js";
import { WEB_ROOT } from "../../src/app/local-start.js";
import { type Config, loadConfig } from "../../src/core/config.js";
import type { Clock } from "../../src/core/clock.js";
import { type Logger, createLogger } from "../../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName, operations } from "../../src/operations/index.js";
import { buildHttpApp } from "../../src/surfaces/rest/app.js";
import type { EventStreamLimits } from "../../src/surfaces/rest/events.js";
import { ident, sql } from "../../src/data/sql.js";
import type { Backend } from "./backends.js";

export interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export interface Harness {
  env: Record<string, string>;
  config: Config;
  service: OpenedService;
  app: FastifyInstance;
  /** Starts listening on a loopback port (once); resolves with the base URL. */
  listen(): Promise<string>;
  http(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  mcp(): Promise<Client>;
  cli(...argv: string[]): Promise<CliResult>;
  /** Calls an operation in-process as the admin (for arranging test data). */
  call(name: string, input?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The service's clock (a ManualClock lets a test move time instead of sleeping). */
  clock?: Clock;
  log?: Logger;
  /** Run as a server process does: hear other processes' changes (PostgreSQL LISTEN) and renew the node lease. */
  longRunning?: boolean;
  /** The event stream's bounds (a test of a slow client lowers the buffer bound). */
  eventLimits?: EventStreamLimits;
  /** Serve GET /metrics as the servers do. */
  metrics?: boolean;
}

export async function startHarness(backend: Backend, extraEnv: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const env = { ...(await backend.freshEnv()), ...extraEnv };
  const config = loadConfig(env);
  const service = await openService(config, {
    log: options.log ?? createLogger("error"),
    longRunning: options.longRunning ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
  const app = await buildHttpApp(service, operations, {
    webRoot: WEB_ROOT,
    ...(options.eventLimits ? { eventLimits: options.eventLimits } : {}),
    ...(options.metrics ? { metrics: createMetrics(service) } : {}),
  });
  let listening: Promise<string> | undefined;
  const listen = () =>
    (listening ??= app.listen({ host: "127.0.0.1", port: 0 }).then(() => {
      const address = app.server.address();
      return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    }));
  const clients: Client[] = [];

  return {
    env,
    config,
    service,
    app,
    listen,
    async http(method, path, body, headers = {}) {
      // Like a real round trip, yield to the event loop: inject can finish on microtasks alone, and a
      // test polling in a loop must not starve the timers the service runs on (timeouts, heartbeats).
      await new Promise((resolve) => setImmediate(resolve));
      const requestHeaders: Record<string, string> = { ...headers };
      let payload: string | undefined;
      if (body !== undefined) {
        payload = typeof body === "string" ? body : JSON.stringify(body);
        requestHeaders["content-type"] ??= "application/json";
      }
      const response = await app.inject({ method: method as "GET", url: path, headers: requestHeaders, ...(payload !== undefined ? { payload } : {}) });
      const text = response.body;
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : String(value));
      }
      let parsed: unknown = undefined;
      try {
        parsed = text === "" ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.statusCode, headers: responseHeaders, body: parsed, text };
    },
    async mcp() {
      const client = new Client({ name: "jobhouse-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL((await listen()) + "/mcp")));
      clients.push(client);
      return client;
    },
    async cli(...argv) {
      let out = "";
      let err = "";
      const code = await runCli(argv, {
        env,
        streams: { out: (t) => void (out += t + "\n"), err: (t) => void (err += t + "\n") },
      });
      return { code, out, err };
    },
    call: (name, input = {}) => invoke(operationByName.get(name)!, input, { ...service, principal: SYNTHETIC_ADMIN }),
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await app.close();
      // The suite's ClickHouse database goes with it (for chDB, through this process's session).
      if (config.ch.engine === "chdb") {
        const columns = await service.columns();
        await columns.command(sql`DROP DATABASE IF EXISTS ${ident(columns.database)}`);
      }
      await service.close();
      await backend.dispose(env);
    },
  };
}
