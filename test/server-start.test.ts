// `jobhouse server start` in distributed mode, as an operator runs it: a real process over
// PostgreSQL and the ClickHouse server that migrates, serves, starts no workers, refuses an
// unreachable store in one line, serves HTTPS when given a certificate, and stops on SIGTERM.

import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { request } from "node:https";
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

describe.runIf(distributed)("server start in distributed mode", () => {
  let env: NodeJS.ProcessEnv;
  let stores: Record<string, string>;
  const servers: ChildProcess[] = [];
  beforeAll(async () => {
    stores = await distributed!.freshEnv();
    env = { ...process.env, ...stores, SERVICE_AUTH: "token", SERVICE_API_TOKEN: "" };
  });
  afterAll(async () => {
    for (const server of servers) if (server.exitCode === null) server.kill("SIGKILL");
    await distributed!.dispose(stores);
  });

  it("migrates a fresh schema, serves, runs no workers, and stops on SIGTERM", async () => {
    const port = await freePort();
    const { server, log } = await startServer(env, ["--port", String(port)]);
    servers.push(server);
    expect(log()).toContain(`listening on http://127.0.0.1:${port} (distributed mode, no workers in this process)`);
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

  it("serves HTTPS with --tls-cert and --tls-key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-tls-"));
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

  it("refuses half a TLS pair and the users scheme (not in this build) in one line", () => {
    const half = refusal({}, ["--tls-cert", "/nonexistent.pem"]);
    expect(half.status).toBe(4);
    expect(half.stderr).toMatch(/--tls-cert and --tls-key go together/);
    const users = refusal({ SERVICE_AUTH: "users" });
    expect(users.status).toBe(4);
    expect(users.stderr.trim().split("\n")).toHaveLength(1);
    expect(users.stderr).toMatch(/SERVICE_AUTH=users/);
  });
});
