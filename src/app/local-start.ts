// `jobhouse local start`: setup on first start, then REST, MCP and the web app on 127.0.0.1, with
// the in-process workers (SPEC "Backend modes": local mode runs everything in one process).

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { readApiToken, type Config } from "../core/config.js";
import { conflict, invalid } from "../core/errors.js";
import { PRIVATE_FILE_MODE } from "../core/private-files.js";
import { invoke, operationByName, operations, SYNTHETIC_ADMIN } from "../operations/index.js";
import { buildHttpApp } from "../surfaces/rest/app.js";
import { createMetrics } from "./metrics.js";
import { openService, type OpenedService } from "./context.js";
import { type EngineRuntime, GRACE_PERIOD_MS, startEngine } from "./engine-runtime.js";
import { reapDeadLocalWorkers } from "../engine/background.js";
import { dropOrphanTables } from "../engine/cleanup.js";
import { registerExamples } from "./examples.js";
import { readLiveServer, removeServerRecord, writeServerRecord } from "./server-file.js";
import { ensurePortFree, listenOrRefuse } from "./listen.js";
import { STOP_BOUND_MS, exitIfStopHangs, untilStopSignal } from "./signals.js";
import { PACKAGE_ROOT } from "./version.js";
import { warnMissingJobRoots } from "./processes.js";

/** The built web app (`npm run build:web`, run by npm install). */
export const WEB_ROOT = fileURLToPath(new URL("web/dist/", PACKAGE_ROOT));
export const DEFAULT_PORT = 5255;

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  service: OpenedService;
  engine: EngineRuntime;
  /** Without `graceMs`, running tasks are waited for however long they take (tests end idle servers). */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export interface LocalServerOptions {
  port: number;
  concurrency?: number;
  registerExamples?: boolean;
}

/** Starts the local server with its in-process worker and background loop; returns once it listens. */
export async function startLocalServer(config: Config, options: LocalServerOptions): Promise<RunningServer> {
  const port = options.port;
  if (config.mode !== "local") {
    throw invalid("`local start` needs local mode: unset SERVICE_SQL_URL and SERVICE_CH_URL (or use sqlite: and chdb:)");
  }
  const running = readLiveServer(config.home);
  if (running && running.pid !== process.pid) {
    throw conflict(`a local server is already running at ${running.url} (pid ${running.pid}) for ${config.home}`, "already_running");
  }
  await ensurePortFree("127.0.0.1", port);
  const service = await openService(config, { longRunning: true });
  try {
    await invoke(operationByName.get("setup")!, {}, { ...service, principal: SYNTHETIC_ADMIN });
    // A home's first server start gets the examples, so the dashboard is never empty.
    if (options.registerExamples !== false && (await examplesDue(service))) {
      const names = await registerExamples(service);
      // Offered once they are there: a start that could register none (each failure is a warning)
      // offers them again next time, rather than marking the home as having had them.
      if (names.length > 0) {
        service.log.info(`registered the example jobs: ${names.join(", ")}`);
        writeFileSync(examplesMarker(service.config), `${new Date().toISOString()}\n`, { mode: PRIVATE_FILE_MODE });
      }
    }
    // chDB's lock is ours: tables a killed predecessor left half-made have no one to finish them.
    const orphans = await dropOrphanTables(service.db, await service.columns());
    if (orphans.length > 0) service.log.warn(`dropped ${orphans.length} column-store table(s) left unregistered by an earlier process: ${orphans.slice(0, 5).join(", ")}`);
    if (readApiToken() === null) {
      service.log.warn("SERVICE_API_TOKEN is not set: the server is open, every request is allowed");
    }
    // The home is ours alone (chDB's lock): a worker of an earlier server whose process is gone
    // will never finish its tasks, so they are retried now rather than after SERVICE_WORKER_TIMEOUT.
    const reaped = await reapDeadLocalWorkers(service);
    if (reaped > 0) service.log.warn(`${reaped} worker(s) of an earlier process were gone: their tasks are retried now`);
    warnMissingJobRoots(service);
    const secret = randomBytes(24).toString("base64url");
    const host = "127.0.0.1";
    const app = await buildHttpApp(service, operations, { webRoot: WEB_ROOT, localSecret: secret, listenHost: host, allowedHosts: config.allowedHosts, metrics: createMetrics(service) });
    // The port first: a taken one refuses the start before any worker or background loop runs.
    const boundPort = await listenOrRefuse(app, host, port);
    const engine = await startEngine(service, {
      concurrency: options.concurrency ?? config.workerConcurrency,
      background: true,
      keepAlive: true,
      warmThreads: true,
    });
    const url = `http://127.0.0.1:${boundPort}`;
    writeServerRecord(config.home, { url, pid: process.pid, secret });
    service.log.info(`jobhouse ${service.version} listening on ${url} (local mode, home ${config.home})`);
    return {
      url,
      app,
      service,
      engine,
      async stop(options = {}) {
        removeServerRecord(config.home, process.pid);
        await app.close();
        await engine.stop(options);
        await service.close();
      },
    };
  } catch (error) {
    await service.close();
    throw error;
  }
}

/** Written once a server offered the examples to its home: they are never offered again. */
const examplesMarker = (config: Config) => join(config.home, "examples-offered");

/**
 * The examples are offered once per home, when nothing is registered yet. Jobs alone do not count:
 * a first user may well run a job from the CLI (in-process, no server) before the first `local start`.
 */
async function examplesDue({ db, config }: OpenedService): Promise<boolean> {
  if (existsSync(examplesMarker(config))) return false;
  return !(await db.selectFrom("registered_jobs").select("name").limit(1).executeTakeFirst());
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function runLocalServer(config: Config, options: LocalServerOptions): Promise<number> {
  const server = await startLocalServer(config, options);
  // As a worker process (CONTRACT §9): running tasks get the grace period, then fail as attempts
  // and are retried at the next start; a task without a timeout no longer holds the process.
  server.service.log.info(`got ${await untilStopSignal()}: shutting down; running tasks get ${GRACE_PERIOD_MS / 1000} s to finish`);
  exitIfStopHangs(server.service.log, "the local server", GRACE_PERIOD_MS + STOP_BOUND_MS);
  await server.stop({ graceMs: GRACE_PERIOD_MS });
  return 0;
}

/** `--reload`: a child server restarted by Node whenever the sources or the web app change. */
export function runWithReload(options: LocalServerOptions): Promise<number> {
  const bin = fileURLToPath(new URL("bin/jobhouse.mjs", PACKAGE_ROOT));
  const watch = ["src", "web", "examples"].map((dir) => `--watch-path=${fileURLToPath(new URL(dir, PACKAGE_ROOT))}`);
  const args = ["local", "start", "--port", String(options.port), ...(options.concurrency ? ["--concurrency", String(options.concurrency)] : [])];
  const child = spawn(process.execPath, [...watch, bin, ...args], { stdio: "inherit" });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 0)));
}
