// The `jobhouse` program: the operation commands generated from the registry, plus the process
// lifecycles that are not operations (local start, worker start, background start, migrate).

import { existsSync } from "node:fs";
import { Argument, Command, CommanderError } from "commander";
import { ConfigError, colorWanted, digitsValue, loadConfig, requestedLogFormat, type Config } from "../core/config.js";
import { MAX_WORKER_CONCURRENCY, MAX_WORKER_TASKS } from "../core/worker-limits.js";
import { visibleControls } from "../core/control-chars.js";
import { ERROR_KINDS, EXIT_CODES, conflict, invalid, isServiceError, storeOutage, toProblem } from "../core/errors.js";
import { openColumnStore } from "../data/client.js";
import { type AnyOperation, SYNTHETIC_ADMIN, invoke, operations } from "../operations/index.js";
import { EXIT_JOB_NOT_COMPLETED, JobNotCompleted, addOperationCommands, type Caller, examplesHelp } from "../surfaces/cli/program.js";
import { openService, type OpenedService } from "./context.js";
import { GRACE_PERIOD_MS, startEngine } from "./engine-runtime.js";
import { createLogger } from "../core/log.js";
import { SHELLS, type Shell, completionScript } from "../surfaces/cli/completion.js";
import { watchInProcess, watchOverHttp } from "./event-watch.js";
import { type LocalCredential, callOverHttp } from "./http-caller.js";
import { LOCAL_SECRET_HEADER } from "../surfaces/rest/auth.js";
import { DEFAULT_PORT, runLocalServer, runWithReload } from "./local-start.js";
import { refuseOutdatedSchema, runBackgroundProcess, runWorkerProcess } from "./processes.js";
import { DEFAULT_HOST, runServer } from "./server-start.js";
import { type ServerRecord, readLiveServer } from "./server-file.js";
import { openStore } from "../store/db.js";
import { migrateToLatest, pendingMigrations } from "../store/migrate.js";
import { VERSION } from "./version.js";
import { asStoreRefusal } from "./store-reach.js";

const EXIT_USAGE = EXIT_CODES.usage;

export interface CliStreams {
  out(text: string): void;
  err(text: string): void;
  /** Whether the reader of `out` has gone (a closed pipe). */
  outClosed?(): boolean;
  isTty?: boolean;
  /** Statuses in colour on standard output. */
  color?: boolean;
}

const defaultStreams: CliStreams = {
  out: (text) => process.stdout.write(text + "\n"),
  // The stream keeps the EPIPE it failed with (main.ts keeps that error from crashing the process).
  outClosed: () => (process.stdout.errored as NodeJS.ErrnoException | null)?.code === "EPIPE",
  // A progress line that redraws itself ends without a newline.
  err: (text) => process.stderr.write(text.startsWith("\r") ? text : text + "\n"),
  isTty: Boolean(process.stderr.isTTY),
  color: colorWanted(Boolean(process.stdout.isTTY)),
};

export interface CliOptions {
  streams?: CliStreams;
  /** The environment to configure from; the process's own by default. */
  env?: Record<string, string | undefined>;
  /** One line of standard input (a password not given as an option); the process's own by default. */
  readLine?: () => Promise<string>;
}

/**
 * The first line of standard input, without its line ending; empty at end of input. At a terminal
 * it asks for it and does not echo what is typed (it is a password).
 */
async function readStdinLine(): Promise<string> {
  if (process.stdin.isTTY) return readHiddenLine("Password: ");
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) return line;
    return "";
  } finally {
    lines.close();
  }
}

function readHiddenLine(prompt: string): Promise<string> {
  const input = process.stdin;
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding("utf8");
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (error?: Error) => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish();
        if (char === "\u0003") return finish(invalid("cancelled at the password prompt"));
        if (char === "\u007f" || char === "\b") typed = [...typed].slice(0, -1).join("");
        else typed += char;
      }
    };
    input.on("data", onData);
  });
}

/** What the CLI shows its own local server instead of a token (the secret from server.json). */
const credentialOf = (server: { secret?: string }): LocalCredential | undefined =>
  server.secret ? { header: LOCAL_SECRET_HEADER, secret: server.secret } : undefined;

/**
 * `help job list` as `job list --help`: commander's help command looks up one word, so it showed
 * the `job` group's help for a subcommand.
 */
function helpAsOption(argv: string[]): string[] {
  return argv[0] === "help" && argv.length > 2 && argv.slice(1).every((word) => !word.startsWith("-")) ? [...argv.slice(1), "--help"] : argv;
}

/** Runs the CLI and returns its exit code (CONTRACT §7). */
export async function runCli(argv: string[], options: CliOptions = {}): Promise<number> {
  const streams = options.streams ?? defaultStreams;
  let service: OpenedService | undefined;
  let config: Config | undefined;
  const getConfig = () => (config ??= loadConfig(options.env));
  let schemaChecked: Promise<void> | undefined;
  let exitCode = 0;
  // A long-running process (a server, a worker, the background loop) logs; a command prints.
  let runsProcess = false;
  const setExitCode = (code: number) => (exitCode = code);
  // The command reports its own outcome; the service's lines (a job's end when `--wait` runs it
  // here) would say it twice. Errors still show, and everything with SERVICE_LOG_LEVEL=debug.
  const getService = async (migrates = false) => {
    const cfg = getConfig();
    // An unreachable PostgreSQL is one line naming it, not an "unexpected failure" (CONTRACT §9).
    // Local mode sets itself up on first use; a distributed deployment's schema is `migrate`'s
    // and `setup`'s.
    const log = createLogger(cfg.logLevel === "debug" ? "debug" : "error", undefined, cfg.logFormat);
    if (service) return service;
    // A mistyped or unset SERVICE_HOME made a new, empty store, and the command then said "(none)"
    // or "not found" with nothing pointing at the home: said once, on stderr.
    const fresh = cfg.sql.dialect === "sqlite" && !migrates && !existsSync(cfg.sql.location);
    service = await openService(cfg, { log, migratesEmptyStore: cfg.mode === "local" || migrates }).catch((error: unknown) => {
      throw asStoreRefusal(cfg, "sql", error);
    });
    if (fresh) streams.err(`note: made a new store at ${cfg.sql.location}: nothing was there yet (is SERVICE_HOME, now ${cfg.home}, the one you meant?)`);
    return service;
  };

  // A running local server takes the operations that need chDB (its process holds the engine's
  // lock) and every write: an entrypoint then names the file the server will load (resolved against
  // its job roots, refused at once with 422 when it is not there, never at run time), and its
  // change feed, the event stream, hears every change. Reads stay in-process.
  const call: Caller = async (op: AnyOperation, input) => {
    const cfg = getConfig();
    // The account is made, as SPEC allows, but nothing in local mode signs in with it: said once,
    // rather than letting someone wait for a login page that never comes.
    if (op.name === "create_user" && cfg.mode === "local") streams.err("note: local mode does not check users (every request is allowed, CONTRACT §8); accounts sign in on a distributed deployment with SERVICE_AUTH=users");
    if ((op.usesColumnStore || op.mutates) && cfg.mode === "local") {
      const server = readLiveServer(cfg.home);
      if (server && op.http) {
        return callOverHttp(server.url, op, input, credentialOf(server));
      }
      // Only setup reaches here (every other such operation has an HTTP address), and the running
      // server already set this home up when it started: its result says so (with --json too; it
      // printed a sentence there).
      if (server) {
        await refuseOlderLocalServer(cfg, server);
        streams.err(`A local server is running at ${server.url}; it set up ${cfg.home} when it started.`);
        return { home: cfg.home, sql: `sqlite:${cfg.sql.location}`, column_store: `${cfg.ch.engine}:${cfg.ch.database}`, migrations_applied: [] };
      }
    }
    const svc = await getService(op.name === "setup");
    // A newer build than the schema: one line saying to migrate, not "relation … does not exist"
    // (setup migrates, so it goes on).
    if (op.name !== "setup") await (schemaChecked ??= refuseOutdatedSchema(svc.db));
    return invoke(op, input, { ...svc, principal: SYNTHETIC_ADMIN });
  };

  const program = new Command("jobhouse")
    .description("Job orchestration: TypeScript jobs, ClickHouse data objects, REST + MCP + CLI")
    .version(VERSION)
    // A usage error is its line and where help is, not the whole help text after it.
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .configureOutput({ writeOut: (t) => streams.out(t.trimEnd()), writeErr: (t) => streams.err(t.trimEnd()) });
  // `run-job --wait` with no local server running: this process runs the job itself.
  const ensureExecution = async () => {
    const cfg = getConfig();
    if (cfg.mode !== "local" || readLiveServer(cfg.home)) return async () => undefined;
    const engine = await startEngine(await getService(), { concurrency: cfg.workerConcurrency, background: false });
    // Ctrl-C while this process runs the job: its worker stops as a worker process's does (a
    // running task gets the grace period, then fails as an attempt, retried at the next start if
    // it has retries left). Killed at once, it left an ACTIVE worker and a RUNNING task.
    const interrupt = (signal: NodeJS.Signals) => {
      process.off("SIGINT", interrupt);
      process.off("SIGTERM", interrupt);
      streams.err(`${signal}: stopping this process's worker; a running task gets ${GRACE_PERIOD_MS / 1000} s, then fails as an attempt (retried at the next \`jobhouse local start\` if it has retries left)`);
      void engine.stop({ graceMs: GRACE_PERIOD_MS }).finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    };
    process.on("SIGINT", interrupt);
    process.on("SIGTERM", interrupt);
    return () => {
      process.off("SIGINT", interrupt);
      process.off("SIGTERM", interrupt);
      return engine.stop();
    };
  };
  // `--wait` and `--follow` hear of changes from the running local server's event stream, or from
  // this process's own change feed (its in-process worker; PostgreSQL NOTIFY in distributed mode).
  const watchEvents = async () => {
    const cfg = getConfig();
    const server = cfg.mode === "local" ? readLiveServer(cfg.home) : undefined;
    if (server) return watchOverHttp(server.url, credentialOf(server));
    return watchInProcess((await getService()).changes);
  };
  addOperationCommands(program, operations, call, { ...streams, ensureExecution, watchEvents, readLine: options.readLine ?? readStdinLine });
  addLifecycleCommands(program, getConfig, streams, setExitCode, () => (runsProcess = true));
  program
    .command("completion")
    .description('Print a completion script for your shell: eval "$(jobhouse completion bash)" (or zsh); jobhouse completion fish | source')
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
    .addHelpText("after", examplesHelp(['eval "$(jobhouse completion bash)"   # in ~/.bashrc', "jobhouse completion fish > ~/.config/fish/completions/jobhouse.fish"]))
    .action((shell: Shell) => streams.out(completionScript(program, shell).trimEnd()));
  for (const command of allCommands(program)) command.exitOverride().configureOutput(program.configureOutput());

  try {
    await program.parseAsync(helpAsOption(argv), { from: "user" });
    return exitCode;
  } catch (error) {
    // A process's refusal to start is a log record like its others, in SERVICE_LOG_FORMAT's format
    // (docs/OPERATIONS.md): a log shipper, or an operator reading a journal, sees it among them.
    return reportError(error, runsProcess ? { ...streams, err: errorRecord(streams, requestedLogFormat(options.env)) } : streams);
  } finally {
    await service?.close().catch(() => undefined);
  }
}

/** `error: <text>` as the one-line record the process's logger writes at error level. */
function errorRecord(streams: CliStreams, format: "text" | "json"): (line: string) => void {
  const logger = createLogger("error", (line) => streams.err(line.trimEnd()), format);
  return (line) => logger.error(line.replace(/^error: /, ""));
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/**
 * A running local server migrated its home when it started, and holds chDB's lock: nothing is left
 * for `migrate` or `setup` to do, unless that server is of an older build than this program.
 */
async function refuseOlderLocalServer(config: Config, server: ServerRecord): Promise<void> {
  const db = openStore(config.sql);
  try {
    const pending = await pendingMigrations(db);
    if (pending.length > 0) {
      throw conflict(`a local server is running at ${server.url} (pid ${server.pid}) with an older build: stop it, then run \`jobhouse migrate\` or \`jobhouse local start\`, which migrates (missing ${pending.join(", ")})`, "server_running");
    }
  } finally {
    await db.destroy();
  }
}

function reportError(error: unknown, streams: CliStreams): number {
  if (error instanceof JobNotCompleted) return EXIT_JOB_NOT_COMPLETED;
  if (error instanceof CommanderError) {
    // Help and version "errors" are successes; everything else commander raises is a usage error.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  if (error instanceof ConfigError || error instanceof UsageError) {
    streams.err(`error: ${visibleControls(error.message)}`);
    return EXIT_USAGE;
  }
  const failure = storeOutage(error) ?? error;
  if (isServiceError(failure)) {
    streams.err(`error: ${visibleControls(failure.detail)} (${failure.code})`);
    return ERROR_KINDS[failure.kind].exitCode;
  }
  // A defect: the message helps the person at the terminal more than toProblem's generic detail.
  streams.err(`error: unexpected failure: ${visibleControls((error as Error)?.message ?? String(error))}`);
  return ERROR_KINDS.internal.exitCode;
}

/**
 * A bad value of a process command's own option: a usage error (exit 2), as the same value in its
 * environment variable is. It exited 4, the code of an operation's invalid input.
 */
class UsageError extends Error {}

function parsePort(value: string): number {
  // Digits only: Number("") is 0 (any free port), and " 80" or "0x50" are not what anyone means.
  const port = digitsValue(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer in 0..65535, got "${value}"`);
  return port;
}

function parsePositive(flag: string, value: string, max = Number.MAX_SAFE_INTEGER): number {
  // Digits only, as for --port: "1e3" (a thousand task threads) and "0x10" are not what anyone means.
  const n = digitsValue(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer, got "${value}"`);
  if (n > max) throw new UsageError(`${flag} must be at most ${max}, got "${value}"`);
  return n;
}

function addLifecycleCommands(
  program: Command,
  getConfig: () => Config,
  streams: CliStreams,
  setExitCode: (code: number) => void,
  startsProcess: () => void,
): void {
  const local = program.commands.find((c) => c.name() === "local") ?? program.command("local").description("local mode commands");
  local
    .command("start")
    .description("Serve REST, MCP and the web app on 127.0.0.1 with in-process workers (runs setup on first start)")
    .option("--port <port>", "port to listen on", String(DEFAULT_PORT))
    .option("--concurrency <n>", "tasks the in-process worker runs at once (default SERVICE_WORKER_CONCURRENCY or 4)")
    .option("--reload", "restart when the sources change (development)")
    .addHelpText("after", examplesHelp(["jobhouse local start", "SERVICE_HOME=/srv/jobhouse jobhouse local start --port 8080 --concurrency 8"]))
    .action(async (options: { port: string; reload?: boolean; concurrency?: string }) => {
      startsProcess();
      const server = { port: parsePort(options.port), concurrency: options.concurrency ? parsePositive("--concurrency", options.concurrency) : undefined };
      setExitCode(options.reload ? await runWithReload(server) : await runLocalServer(getConfig(), server));
    });

  const server = program.commands.find((c) => c.name() === "server") ?? program.command("server").description("server commands");
  server
    .command("start")
    .description("Serve REST, MCP and the web app; in distributed mode with no workers (run `worker start` for those), in local mode as `local start`")
    .option("--host <host>", "address to listen on (distributed mode)", DEFAULT_HOST)
    .option("--port <port>", "port to listen on", String(DEFAULT_PORT))
    .option("--tls-cert <file>", "PEM certificate: serve HTTPS (with --tls-key; distributed mode)")
    .option("--tls-key <file>", "PEM private key of --tls-cert")
    .addHelpText("after", examplesHelp(["SERVICE_SQL_URL=postgres://jobhouse@db/jobhouse SERVICE_CH_URL=http://ch:8123/jobhouse jobhouse server start --host 0.0.0.0"]))
    .action(async (options: { host: string; port: string; tlsCert?: string; tlsKey?: string }) => {
      startsProcess();
      setExitCode(await runServer(getConfig(), { host: options.host, port: parsePort(options.port), tlsCert: options.tlsCert, tlsKey: options.tlsKey }));
    });

  program
    .command("migrate")
    .description("Bring the SQL schema up to date and create the ClickHouse database if missing")
    // SPEC: --json on every command group; the field is setup's, which migrates the same way.
    .option("--json", "print the result as JSON: {migrations_applied: [names]}")
    .addHelpText("after", examplesHelp(["SERVICE_SQL_URL=postgres://jobhouse@db/jobhouse jobhouse migrate"]))
    .action(async (options: { json?: boolean }) => {
      // The SQL store alone: opening the whole service migrates a fresh schema on the way (to lease
      // an id node), and this command would then report nothing applied.
      const config = getConfig();
      const db = openStore(config.sql);
      try {
        await migrate();
      } catch (error) {
        // --json prints a refusal's Problem, as the operations' commands do.
        if (options.json && isServiceError(error)) streams.out(JSON.stringify(toProblem(error), null, 2));
        throw error;
      } finally {
        await db.destroy();
      }

      async function migrate(): Promise<void> {
        // A running local server migrated its home when it started, and holds chDB's lock: this
        // command said "unexpected failure: Failed to create connection" (exit 10).
        const server = config.mode === "local" ? readLiveServer(config.home) : undefined;
        if (server) {
          await refuseOlderLocalServer(config, server);
          streams.out(options.json ? JSON.stringify({ migrations_applied: [] }, null, 2) : `A local server is running at ${server.url}; it migrated ${config.home} when it started: the schema is up to date.`);
          return;
        }
        const applied = await migrateToLatest(db).catch((error: unknown) => {
          throw asStoreRefusal(config, "sql", error);
        });
        // The ClickHouse database is the schema's too: made here, so workers and the CLI find it.
        const columns = await openColumnStore(config.ch, { create: true }).catch((error: unknown) => {
          throw asStoreRefusal(config, "clickhouse", error);
        });
        await columns.close();
        if (options.json) streams.out(JSON.stringify({ migrations_applied: applied }, null, 2));
        else streams.out(applied.length ? `Applied ${applied.join(", ")}` : "Schema is up to date");
      }
    });

  const worker = program.commands.find((c) => c.name() === "worker")!;
  worker
    .command("start")
    .description("Run a worker process until SIGTERM, stop_worker or --max-tasks (distributed mode)")
    .option("--max-tasks <n>", "exit after this many tasks")
    .option("--concurrency <n>", "tasks run at once (default SERVICE_WORKER_CONCURRENCY or 4)")
    .addHelpText("after", examplesHelp(["jobhouse worker start --concurrency 8", "jobhouse worker start --max-tasks 1000   # exit after 1,000 tasks (recycle memory)"]))
    .action(async (options: { maxTasks?: string; concurrency?: string }) => {
      startsProcess();
      const config = getConfig();
      setExitCode(
        await runWorkerProcess(config, {
          concurrency: options.concurrency ? parsePositive("--concurrency", options.concurrency, MAX_WORKER_CONCURRENCY) : config.workerConcurrency,
          maxTasks: options.maxTasks ? parsePositive("--max-tasks", options.maxTasks, MAX_WORKER_TASKS) : null,
        }),
      );
    });
  program
    .command("background")
    .description("Background process commands")
    .command("start")
    .description("Run the background loop: lost workers, schedules, retention, temp cleanup (distributed mode)")
    .addHelpText("after", examplesHelp(["jobhouse background start"]))
    .action(async () => {
      startsProcess();
      setExitCode(await runBackgroundProcess(getConfig()));
    });
}
