// `jobhouse server start` in distributed mode, as an operator runs it: a real process over
// PostgreSQL and the ClickHouse server that migrates, serves, starts no workers, refuses an
// unreachable store in one line, serves HTTPS when given a certificate, and stops on SIGTERM.

import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, freePort } from "./support/processes.js";
import { BACKENDS } from "./support/backends.js";

const distributed = BACKENDS.find((b) => b.name === "distributed");


/** `server start` with `env`; resolves once it listens (or exits), with its stderr so far. */
async function startServer(env: NodeJS.ProcessEnv, args: string[]): Promise<{ server: ChildProcess; log: () => string }> {
  let stderr = "";
  const server = spawn(process.execPath, [BIN, "server", "start", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  server.stderr!.on("data", (chunk) => (stderr += chunk));
  for (let i = 0; i < 300 && !stderr.includes("listening on") && server.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  return { server, log: () => stderr };
}

// Local mode serves http on 127.0.0.1 only; `server start --host 0.0.0.0 --tls-cert … --tls-key …`
// there dropped both in silence, and started.
describe("server start in local mode", () => {
  it("refuses --host and the TLS flags in one line", () => {
    const home = mkdtempSync(join(tmpdir(), "jobhouse-local-"));
    try {
      for (const args of [["--host", "0.0.0.0"], ["--tls-cert", "c.pem", "--tls-key", "k.pem"]]) {
        const env = { PATH: process.env.PATH, HOME: process.env.HOME, SERVICE_HOME: home };
        const refused = spawnSync(process.execPath, [BIN, "server", "start", "--port", "0", ...args], { env, encoding: "utf8", timeout: 15_000 });
        expect(refused.status, args.join(" ")).toBe(4);
        expect(refused.stderr.trim().split("\n")).toHaveLength(1);
        expect(refused.stderr).toMatch(/--host and --tls-cert\/--tls-key are for distributed mode/);
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe.runIf(distributed)("server start in distributed mode", () => {
  let env: NodeJS.ProcessEnv;
  let stores: Record<string, string>;
  const servers: ChildProcess[] = [];
  const tempDirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-tls-"));
    tempDirs.push(dir);
    return dir;
  };
  beforeAll(async () => {
    stores = await distributed!.freshEnv();
    env = { ...process.env, ...stores, SERVICE_AUTH: "token", SERVICE_API_TOKEN: "" };
  });
  afterAll(async () => {
    for (const server of servers) if (server.exitCode === null) server.kill("SIGKILL");
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await distributed!.dispose(stores);
  });

  it("migrates a fresh schema, serves, runs no workers, and stops on SIGTERM", async () => {
    const port = await freePort();
    const { server, log } = await startServer(env, ["--port", String(port)]);
    servers.push(server);
    expect(log()).toContain(`listening on http://127.0.0.1:${port} (distributed mode, no workers in this process)`);
    // docs/DEPLOYMENT.md: the server says what it migrated (the fresh schema was migrated while the
    // service opened, and the line was missing).
    expect(log()).toMatch(/INFO applied migrations: 001-initial, /);
    const url = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: "ok", mode: "distributed" });
    const run = await fetch(`${url}/api/v0/jobs:run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "test/fixtures/jobs.ts:hello" }) });
    expect(run.status).toBe(201);
    const { id } = (await run.json()) as { id: string };
    // No worker anywhere: the job waits. (Nothing in this process could claim it.)
    expect(((await (await fetch(`${url}/api/v0/workers`)).json()) as { total: number }).total).toBe(0);
    expect(((await (await fetch(`${url}/api/v0/jobs/${id}`)).json()) as { status: string }).status).toBe("PENDING");
    // The server applied every migration: `migrate` has nothing left to do.
    const migrate = spawnSync(process.execPath, [BIN, "migrate"], { env, encoding: "utf8" });
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain("Schema is up to date");

    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
    server.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  // SPEC Scheme B rule 2: the first admin from the environment; nothing tested it end to end.
  it("seeds the first admin from SERVICE_ADMIN_USERNAME and SERVICE_ADMIN_PASSWORD once, and says which half of a pair is missing", async () => {
    const own = await distributed!.freshEnv();
    const stop = async (server: ChildProcess) => {
      const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
      server.kill("SIGTERM");
      expect(await exited).toBe(0);
    };
    try {
      const usersEnv = { ...process.env, ...own, SERVICE_AUTH: "users", SERVICE_JWT_SECRET: "s".repeat(48), SERVICE_API_TOKEN: "" };
      const half = await startServer({ ...usersEnv, SERVICE_ADMIN_USERNAME: "boss" }, ["--port", String(await freePort())]);
      servers.push(half.server);
      expect(half.log()).toMatch(/SERVICE_ADMIN_USERNAME is set without SERVICE_ADMIN_PASSWORD, so no admin was created/);
      await stop(half.server);

      const pair = { ...usersEnv, SERVICE_ADMIN_USERNAME: "boss", SERVICE_ADMIN_PASSWORD: "boss password 1" };
      for (const [round, created] of [[1, true], [2, false]] as const) {
        const port = await freePort();
        const { server, log } = await startServer(pair, ["--port", String(port)]);
        servers.push(server);
        expect(log().includes("created the first admin, boss"), `start ${round}`).toBe(created);
        const url = `http://127.0.0.1:${port}/api/v0`;
        const login = await fetch(`${url}/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "boss", password: "boss password 1" }) });
        expect(login.status, `start ${round}`).toBe(200);
        const { access_token: token } = (await login.json()) as { access_token: string };
        expect(await (await fetch(`${url}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json()).toMatchObject({ username: "boss", role: "admin" });
        const users = (await (await fetch(`${url}/users`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: unknown[] };
        expect(users.items).toHaveLength(1);
        await stop(server);
      }
    } finally {
      await distributed!.dispose(own);
    }
  });

  // The address was logged as http://:::5255, which is no URL.
  it("logs an IPv6 --host in brackets and answers on 127.0.0.1 with --host ::", async () => {
    const port = await freePort();
    const { server, log } = await startServer(env, ["--host", "::", "--port", String(port)]);
    servers.push(server);
    expect(log()).toContain(`listening on http://[::]:${port} (distributed mode`);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    server.kill("SIGTERM");
  });

  it("serves HTTPS with --tls-cert and --tls-key", async () => {
    const dir = tempDir();
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stdio: "ignore" });
    const port = await freePort();
    const { server, log } = await startServer(env, ["--port", String(port), "--tls-cert", join(dir, "cert.pem"), "--tls-key", join(dir, "key.pem")]);
    servers.push(server);
    expect(log()).toContain(`listening on https://127.0.0.1:${port}`);
    const status = await new Promise<number>((resolve, reject) => {
      request({ host: "127.0.0.1", port, path: "/health", rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on("error", reject)
        .end();
    });
    expect(status).toBe(200);
    server.kill("SIGTERM");
  });

  const refusal = (extra: Record<string, string>, args: string[] = []) =>
    spawnSync(process.execPath, [BIN, "server", "start", "--port", "0", ...args], { env: { ...env, ...extra }, encoding: "utf8", timeout: 30_000 });

  it("refuses an unreachable PostgreSQL or ClickHouse in one line naming it, password hidden", () => {
    const sql = refusal({ SERVICE_SQL_URL: "postgres://someone:s3cret@127.0.0.1:1/nowhere" });
    expect(sql.status).toBe(10);
    expect(sql.stderr.trim().split("\n")).toHaveLength(1);
    expect(sql.stderr).toMatch(/PostgreSQL at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nowhere cannot be reached: ECONNREFUSED/);
    expect(sql.stderr).not.toContain("s3cret");
    const ch = refusal({ SERVICE_CH_URL: "http://127.0.0.1:9/nowhere" });
    expect(ch.status).toBe(10);
    expect(ch.stderr.trim().split("\n")).toHaveLength(1);
    expect(ch.stderr).toMatch(/ClickHouse at http:\/\/127\.0\.0\.1:9\/nowhere cannot be reached/);
  });

  // These said "unexpected failure: connect ECONNREFUSED …" (no store, no address), or started a
  // worker whose every data task would then fail.
  it("migrate, the commands, worker start and background start refuse an unreachable store the same way", () => {
    const run = (args: string[], extra: Record<string, string>) =>
      spawnSync(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, encoding: "utf8", timeout: 30_000 });
    const noSql = { SERVICE_SQL_URL: "postgres://someone:s3cret@127.0.0.1:1/nowhere" };
    for (const args of [["migrate"], ["job", "list"], ["worker", "start"]]) {
      const refused = run(args, noSql);
      expect(refused.status, args.join(" ")).toBe(10);
      expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(refused.stderr).toMatch(/PostgreSQL at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nowhere cannot be reached: ECONNREFUSED/);
    }
    // --json prints the refusal's Problem, as the operations' commands do (found by review).
    for (const args of [["migrate", "--json"], ["job", "list", "--json"]]) {
      const refused = run(args, noSql);
      expect(refused.status, args.join(" ")).toBe(10);
      expect(JSON.parse(refused.stdout), args.join(" ")).toMatchObject({ status: 503, code: "sql_unreachable" });
    }
    const noClickHouse = { SERVICE_CH_URL: "http://127.0.0.1:9/nowhere" };
    expect(run(["migrate"], {}).status).toBe(0);
    for (const args of [["data", "list"], ["worker", "start"], ["background", "start"]]) {
      const refused = run(args, noClickHouse);
      expect(refused.status, args.join(" ")).toBe(10);
      expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(refused.stderr).toMatch(/ClickHouse at http:\/\/127\.0\.0\.1:9\/nowhere cannot be reached: \w/);
    }
  });

  // It was "unexpected failure: EEXIST: file already exists, mkdir '…'", exit 10.
  it("refuses a SERVICE_LOG_DIR that is a file in one line naming the variable", () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-logdir-"));
    try {
      const file = join(dir, "a-file");
      writeFileSync(file, "");
      const refused = refusal({ SERVICE_LOG_DIR: file });
      expect(refused.status, refused.stderr).toBe(2);
      // (After the migrations it applied, which it logs.)
      expect(refused.stderr.trim().split("\n").filter((line) => !/ INFO /.test(line)), refused.stderr).toHaveLength(1);
      expect(refused.stderr).toContain(`SERVICE_LOG_DIR (${file}) must be a folder, and a file is in its place`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A mistyped database name made a database of its own in every process that opened it, where a
  // worker's tables then went, out of the server's sight.
  it("worker start, background start and the commands refuse a ClickHouse database that does not exist; migrate creates it", () => {
    const run = (args: string[], extra: Record<string, string>) =>
      spawnSync(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, encoding: "utf8", timeout: 30_000 });
    const typo = new URL(env.SERVICE_CH_URL!);
    typo.pathname = `/typo_${process.pid}_${Date.now().toString(36)}`;
    const database = typo.pathname.slice(1);
    const exists = () => execFileSync("curl", ["-s", `${typo.protocol}//${typo.host}/?query=${encodeURIComponent(`SELECT count() FROM system.databases WHERE name = '${database}'`)}`], { encoding: "utf8" }).trim();
    for (const args of [["worker", "start"], ["background", "start"], ["data", "list"]]) {
      const refused = run(args, { SERVICE_CH_URL: typo.toString() });
      expect(refused.status, args.join(" ")).toBe(10);
      expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(refused.stderr).toContain(`ClickHouse database "${database}" does not exist`);
    }
    expect(exists()).toBe("0");
    try {
      expect(run(["migrate"], { SERVICE_CH_URL: typo.toString() }).status).toBe(0);
      expect(exists()).toBe("1");
      expect(run(["data", "list"], { SERVICE_CH_URL: typo.toString() }).status).toBe(0);
    } finally {
      execFileSync("curl", ["-s", `${typo.protocol}//${typo.host}/`, "--data-binary", `DROP DATABASE IF EXISTS ${database}`]);
    }
  });

  // A wrong ClickHouse password: server start said "unexpected failure: Code: 193, e.displayText() = …"
  // over two lines, and worker start started (its /ping asked for no credentials), to fail every data task.
  it("refuses ClickHouse credentials the server does not accept in one line, password hidden", () => {
    const chUrl = new URL(env.SERVICE_CH_URL!);
    chUrl.username = "default";
    chUrl.password = "not-the-password";
    for (const args of [["server", "start", "--port", "0"], ["worker", "start"], ["data", "list"]]) {
      const refused = spawnSync(process.execPath, [BIN, ...args], { env: { ...env, SERVICE_CH_URL: chUrl.toString() }, encoding: "utf8", timeout: 30_000 });
      expect(refused.status, args.join(" ")).toBe(10);
      expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(refused.stderr).toMatch(/ClickHouse at http:\/\/default:\*\*\*@\S+ cannot be reached: (Wrong password for user default|.*Authentication failed.*) \(clickhouse_unreachable\)$/m);
      expect(refused.stderr).not.toContain("not-the-password");
    }
  });

  // https:// to a ClickHouse that speaks http said "unexpected failure: write EPROTO …" (the CLI) or
  // OpenSSL's words over two lines (server start); sslmode to a PostgreSQL without TLS, "unexpected failure".
  it("refuses a store URL whose TLS does not match the server in one line naming it", async () => {
    const run = (args: string[], extra: Record<string, string>) =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 });
        let stderr = "";
        child.stderr!.on("data", (chunk) => (stderr += chunk));
        child.on("close", (status) => resolve({ status, stderr }));
      });
    // A ClickHouse stand-in that speaks http only, in this process (so the run above is async): the
    // shared ClickHouse server, busy with the other suites, can hold a new connection past the
    // client's timeout, and the refusal then says so instead of naming TLS.
    const plainHttp = createServer((_, response) => response.end("Ok.\n"));
    await new Promise<void>((resolve) => plainHttp.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = plainHttp.address() as AddressInfo;
      const tlsClickHouse = { SERVICE_CH_URL: `https://127.0.0.1:${port}/${new URL(env.SERVICE_CH_URL!).pathname.slice(1)}` };
      // A deployment's CLI finds the schema `migrate` made; it no longer makes it on the way in.
      expect((await run(["migrate"], {})).status).toBe(0);
      for (const args of [["data", "list"], ["server", "start", "--port", "0"], ["worker", "start"]]) {
        const refused = await run(args, tlsClickHouse);
        expect(refused.status, args.join(" ")).toBe(10);
        expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
        expect(refused.stderr).toMatch(/ClickHouse at https:\S+ cannot be reached: TLS handshake failed: it does not speak TLS/);
      }
    } finally {
      plainHttp.close();
    }
    const sqlUrl = new URL(env.SERVICE_SQL_URL!);
    sqlUrl.searchParams.set("sslmode", "verify-full");
    const refused = await run(["job", "list"], { SERVICE_SQL_URL: sqlUrl.toString() });
    expect(refused.status).toBe(10);
    expect(refused.stderr).toMatch(/^error: PostgreSQL at \S+ cannot be reached: The server does not support SSL connections \(sql_unreachable\)$/m);
  });

  // A file that is not PEM, or a key of another certificate, said "unexpected failure: error:0480006C:PEM
  // routines::no start line" (exit 10), after the schema was migrated and the admin seeded.
  it("refuses a TLS file that is not PEM, or a key that is not the certificate's, in one line naming the flag", () => {
    const dir = tempDir();
    const pem = (name: string) => join(dir, name);
    for (const n of ["1", "2"]) {
      execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", pem(`key${n}.pem`), "-out", pem(`cert${n}.pem`)], { stdio: "ignore" });
    }
    writeFileSync(pem("junk.pem"), "not a certificate\n");
    const cases: Array<[string[], RegExp]> = [
      [["--tls-cert", pem("junk.pem"), "--tls-key", pem("key1.pem")], /--tls-cert \S+junk\.pem is not a PEM certificate/],
      [["--tls-cert", pem("key1.pem"), "--tls-key", pem("cert1.pem")], /--tls-cert \S+key1\.pem is not a PEM certificate/],
      [["--tls-cert", pem("cert1.pem"), "--tls-key", pem("junk.pem")], /--tls-key \S+junk\.pem is not a PEM private key/],
      [["--tls-cert", pem("cert1.pem"), "--tls-key", pem("key2.pem")], /--tls-key \S+key2\.pem does not go with --tls-cert/],
    ];
    for (const [args, message] of cases) {
      const refused = refusal({}, args);
      expect(refused.status, args.join(" ")).toBe(4);
      expect(refused.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(refused.stderr).toMatch(message);
    }
  });

  // An empty --port was Number("") = 0: the server started on a random port nobody asked for.
  it("refuses a --port that is not digits in one line", () => {
    for (const port of ["", " 80", "0x50", "1e3", "-1", "65536"]) {
      const refused = spawnSync(process.execPath, [BIN, "server", "start", "--port", port], { env, encoding: "utf8", timeout: 15_000 });
      // A usage error (2), as a bad SERVICE_* value is; it was 4, an operation's invalid input.
      expect(refused.status, JSON.stringify(port)).toBe(2);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toMatch(/--port must be an integer in 0\.\.65535/);
    }
  });

  // A name that does not resolve said "unexpected failure: getaddrinfo ENOTFOUND …".
  it("refuses a --host that does not resolve in one line, before the stores open", async () => {
    const refused = spawnSync(process.execPath, [BIN, "server", "start", "--host", "no-such-host.invalid", "--port", String(await freePort())], { env, encoding: "utf8", timeout: 30_000 });
    expect(refused.status).toBe(10);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(/no-such-host\.invalid cannot be resolved .*choose another with --host \(host_unavailable\)/);
  });

  it("refuses half a TLS pair, and the users scheme without SERVICE_JWT_SECRET, in one line", () => {
    const half = refusal({}, ["--tls-cert", "/nonexistent.pem"]);
    expect(half.status).toBe(4);
    expect(half.stderr).toMatch(/--tls-cert and --tls-key go together/);
    const users = refusal({ SERVICE_AUTH: "users" });
    expect(users.status).toBe(2);
    expect(users.stderr.trim().split("\n")).toHaveLength(1);
    expect(users.stderr).toMatch(/SERVICE_AUTH=users/);
  });
});
