// `jobhouse local start` as a user runs it: a real process, setup on first start, the open-server
// WARNING, server.json, and CLI commands that need chDB reaching it over loopback.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, freePort } from "./support/processes.js";



/** Polls the server's REST API until the job ends (at most 15 s); returns its final status. */
async function endedStatus(url: string, id: string): Promise<string> {
  let status = "PENDING";
  for (let i = 0; i < 300 && (status === "PENDING" || status === "RUNNING"); i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = ((await (await fetch(`${url}/api/v0/jobs/${id}`)).json()) as { status: string }).status;
  }
  return status;
}

/** `local start` on a free port as its own process; resolves once it listens. */
async function spawnLocalServer(env: NodeJS.ProcessEnv): Promise<{ server: ChildProcess; url: string }> {
  const port = await freePort();
  let stderr = "";
  const server = spawn(process.execPath, [BIN, "local", "start", "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] });
  server.stderr!.on("data", (chunk) => (stderr += chunk));
  for (let i = 0; i < 300 && !stderr.includes("listening on"); i++) await new Promise((r) => setTimeout(r, 100));
  return { server, url: `http://127.0.0.1:${port}` };
}

describe("local start", () => {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-local-"));
  const env = { ...process.env, SERVICE_HOME: home, SERVICE_API_TOKEN: "", SERVICE_SQL_URL: "", SERVICE_CH_URL: "" };
  let server: ChildProcess;
  let stderr = "";
  let url = "";

  const cli = (...argv: string[]) => spawnSync(process.execPath, [BIN, ...argv], { env, encoding: "utf8" });

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [BIN, "local", "start", "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] });
    server.stderr!.on("data", (chunk) => (stderr += chunk));
    for (let i = 0; i < 300 && !stderr.includes("listening on"); i++) await new Promise((r) => setTimeout(r, 100));
  });
  afterAll(() => {
    if (server.exitCode === null) server.kill("SIGKILL");
  });

  it("runs setup on first start and warns once that the server is open", async () => {
    expect(stderr).toContain(`listening on ${url}`);
    expect(stderr.match(/WARNING .*open/g)).toHaveLength(1);
    expect(existsSync(join(home, "local.db"))).toBe(true);
    expect(JSON.parse(readFileSync(join(home, "server.json"), "utf8"))).toEqual({ url, pid: server.pid, secret: expect.stringMatching(/^[\w-]{32}$/) });
    const health = await (await fetch(`${url}/health`)).json();
    expect(health).toMatchObject({ status: "ok", mode: "local" });
  });

  it("sends column-store commands and writes to the running server, and reads in-process", () => {
    const data = cli("data", "list", "--json");
    expect(data.status, data.stderr).toBe(0);
    expect(JSON.parse(data.stdout)).toEqual({ items: [], total: 0, next_cursor: null });
    const run = cli("run-job", "test/fixtures/jobs.ts:hello", "--json");
    expect(run.status, run.stderr).toBe(0);
    const job = JSON.parse(run.stdout) as { id: string; status: string };
    expect(job.status).toBe("PENDING");
    expect(cli("job", "get", job.id).stdout).toContain(job.id);
  });

  // Sent to the server unchecked, an empty ref made the path /jobs//cancel ("no route", exit 1) and
  // ".." was resolved away by the URL (POST /api/v0/cancel), which no encoding prevents.
  it("checks what it sends the server as every surface does, and refuses dot refs no URL can carry", () => {
    for (const argv of [["job", "cancel", ""], ["worker", "stop", ""], ["job", "disable", ""]]) {
      const refused = cli(...argv);
      expect(refused.status, `${argv.join(" ")}: ${refused.stderr}`).toBe(4);
      expect(refused.stderr).not.toContain("no route");
    }
    for (const argv of [["job", "cancel", ".."], ["job", "enable", "."], ["data", "delete", ".."]]) {
      const refused = cli(...argv);
      expect(refused.status, `${argv.join(" ")}: ${refused.stderr}`).toBe(4);
      expect(refused.stderr).toMatch(/cannot travel in a URL path|must be an object name/);
    }
  });

  it("registers the examples on a fresh home and runs them in the server process", async () => {
    const registered = JSON.parse(cli("registered-job", "list", "--json").stdout) as { items: { name: string; schedule: string | null }[] };
    expect(registered.items.map((r) => r.name).sort()).toEqual(["heartbeat", "primes", "sales"]);
    expect(registered.items.find((r) => r.name === "heartbeat")!.schedule).toBe("*/5 * * * *");
    const started = (await (await fetch(`${url}/api/v0/jobs:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "sales" }),
    })).json()) as { id: string };
    expect(await endedStatus(url, started.id)).toBe("COMPLETED");
    const workers = (await (await fetch(`${url}/api/v0/workers?status=ACTIVE`)).json()) as { items: { pid: number }[] };
    expect(workers.items.map((w) => w.pid)).toContain(server.pid);
  });

  it("resolves a CLI entrypoint where the server will load it: a file only the CLI's folder has is refused at once", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "jobhouse-elsewhere-"));
    writeFileSync(join(elsewhere, "math.ts"), 'import { job } from "jobhouse";\nexport const pipeline = job("math", async () => 1);\n');
    const inFolder = (...argv: string[]) => spawnSync(process.execPath, [BIN, ...argv], { env, encoding: "utf8", cwd: elsewhere });
    for (const argv of [["run-job", "math.ts:pipeline"], ["register-job", "math.ts:pipeline", "--name", "math"]]) {
      const refused = inFolder(...argv);
      expect(refused.status, refused.stderr).toBe(4);
      expect(refused.stderr).toMatch(/math\.ts/);
      expect(refused.stderr).not.toContain(elsewhere);
    }
    // Nothing was stored that would fail later.
    expect(cli("job", "list", "--name", "math", "--json").stdout).toContain('"items": []');
    expect(cli("registered-job", "list", "--json").stdout).not.toContain('"math"');
  });

  it("follows the server's event stream: run-job --wait, and task logs --follow until the task ends", async () => {
    const waited = cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":2}', "--wait", "--json");
    expect(waited.status, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: "COMPLETED", result: 13 });

    const started = (await (await fetch(`${url}/api/v0/jobs:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "test/fixtures/jobs.ts:talkerJob", kwargs: { lines: 5, everyMs: 100, waitMs: 300 } }),
    })).json()) as { id: string };
    let taskId: string | undefined;
    for (let i = 0; i < 100 && !taskId; i++) {
      const job = (await (await fetch(`${url}/api/v0/jobs/${started.id}`)).json()) as { tasks: { id: string; name: string }[] };
      taskId = job.tasks.find((t) => t.name === "talker")?.id;
      if (!taskId) await new Promise((r) => setTimeout(r, 50));
    }
    const followed = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "task", "logs", taskId!, "--follow"], { env });
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.on("exit", (code) => resolve({ code, out }));
    });
    expect(followed.code).toBe(0);
    for (let i = 1; i <= 5; i++) expect(followed.out.match(new RegExp(`INFO line ${i} `, "g")), followed.out).toHaveLength(1);
  });

  it("keeps the API responsive while tasks run", async () => {
    const started = (await (await fetch(`${url}/api/v0/jobs:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "primes", kwargs: { limit: 3_000_000, chunks: 4 } }),
    })).json()) as { id: string };
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      expect((await fetch(`${url}/health`)).status).toBe(200);
      // A generous bound: a blocked event loop would take seconds.
      expect(performance.now() - t0).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 100));
    }
    await fetch(`${url}/api/v0/jobs/${started.id}/cancel`, { method: "POST" });
  });

  it("takes writes from several CLI processes at once while its worker writes too", async () => {
    const runOne = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, "run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":3}', "--json"], { env });
        let out = "";
        child.stdout.on("data", (chunk) => (out += chunk));
        child.on("exit", (code) => resolve({ code, out }));
      });
    const runs = await Promise.all([runOne(), runOne(), runOne(), runOne()]);
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    for (const { out } of runs) {
      const id = (JSON.parse(out) as { id: string }).id;
      expect(await endedStatus(url, id)).toBe("COMPLETED");
    }
  });

  it("setup with the server running has nothing to do", () => {
    const setup = cli("setup");
    expect(setup.status, setup.stderr).toBe(0);
    expect(setup.stderr).toMatch(/local server is running at .* it set up/);
    expect(setup.stdout.trim()).toBe("Ready (0 migration(s) applied)");
    // Found by trying the product: --json printed the sentence, not setup's body.
    const json = cli("setup", "--json");
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ home: expect.any(String), sql: expect.stringMatching(/^sqlite:/), column_store: expect.stringMatching(/^chdb:/), migrations_applied: [] });
  });

  it("refuses a second server on the same home", () => {
    const second = cli("local", "start", "--port", "0");
    // A conflict (3), as the README's exit codes say; it was 10, "unexpected".
    expect(second.status).toBe(3);
    expect(second.stderr).toMatch(/already running/);
  });

  // Found by trying the product: migrate said "unexpected failure: Failed to create connection"
  // (chDB's lock is the running server's), exit 10.
  it("migrate with the server running says the schema is up to date", () => {
    const migrate = cli("migrate");
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/A local server is running at .*: the schema is up to date/);
    expect(JSON.parse(cli("migrate", "--json").stdout)).toEqual({ migrations_applied: [] });
  });

  it("setup is idempotent", async () => {
    const response = await fetch(`${url}/api/v0/jobs`);
    expect(response.status).toBe(200);
  });

  // Found by trying the product: `task logs --follow | head -2` went on until the task ended.
  it("stops following a task's log when its reader goes away", async () => {
    const started = await fetch(`${url}/api/v0/jobs:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "test/fixtures/jobs.ts:talkerJob", kwargs: { lines: 200, everyMs: 100 } }),
    });
    const { id } = (await started.json()) as { id: string };
    let taskId: string | undefined;
    for (let i = 0; i < 200 && !taskId; i++) {
      const job = (await (await fetch(`${url}/api/v0/jobs/${id}`)).json()) as { tasks: { id: string; name: string; status: string }[] };
      taskId = job.tasks.find((t) => t.name === "talker" && t.status === "RUNNING")?.id;
      if (!taskId) await new Promise((r) => setTimeout(r, 50));
    }
    const follower = spawn(process.execPath, [BIN, "task", "logs", taskId!, "--follow"], { env, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => follower.on("exit", resolve));
    await new Promise((resolve) => follower.stdout!.once("data", resolve));
    const closedAt = Date.now();
    follower.stdout!.destroy();
    expect(await exited).toBe(0);
    // The task writes for 20 s: the follower ended with its reader, not with the task.
    expect(Date.now() - closedAt).toBeLessThan(10_000);
    await fetch(`${url}/api/v0/jobs/${id}/cancel`, { method: "POST" });
  });

  // Found by trying the product: a task that ignores its signal held the server (with its API
  // already closed) until the task ended by itself, minutes later.
  it("stops on SIGTERM within the grace period, though a task ignores its signal, and removes server.json", async () => {
    const run = cli("run-job", "test/fixtures/jobs.ts:stubbornJob", "--kwargs", '{"ms":600000}', "--json");
    expect(run.status, run.stderr).toBe(0);
    const jobId = (JSON.parse(run.stdout) as { id: string }).id;
    const running = async () => ((await (await fetch(`${url}/api/v0/jobs/${jobId}`)).json()) as { tasks: { name: string; status: string }[] }).tasks.some((t) => t.name === "stubborn" && t.status === "RUNNING");
    for (let i = 0; i < 200 && !(await running()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await running()).toBe(true);
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
    const signalledAt = Date.now();
    server.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(15_000);
    expect(stderr).toMatch(/running tasks get 5 s to finish/);
    expect(existsSync(join(home, "server.json"))).toBe(false);
  });

  it("runs a job file from any folder that imports \"jobhouse\" with nothing installed there", () => {
    const folder = mkdtempSync(join(tmpdir(), "jobhouse-elsewhere-"));
    writeFileSync(
      join(folder, "greet.ts"),
      'import { job, task } from "jobhouse";\n' +
        'export const shout = task("shout", async ({ text }: { text: string }) => text.toUpperCase());\n' +
        'export const greet = job("greet", async ({ who }: { who: string }) => shout({ text: `hello ${who}` }));\n',
    );
    // No server is running now: --wait runs the job in the CLI process, resolving "jobhouse" itself.
    const run = spawnSync(process.execPath, [BIN, "run-job", `${folder}/greet.ts:greet`, "--kwargs", '{"who":"there"}', "--wait"], {
      env,
      cwd: folder,
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('result: "HELLO THERE"');
  });

  it("refuses a mix of backends in one line naming both variables", () => {
    const mixed = spawnSync(process.execPath, [BIN, "job", "list"], {
      env: { ...env, SERVICE_SQL_URL: "postgres://localhost/x", SERVICE_CH_URL: "" },
      encoding: "utf8",
    });
    expect(mixed.status).toBe(2);
    expect(mixed.stderr.trim().split("\n")).toHaveLength(1);
    expect(mixed.stderr).toMatch(/SERVICE_SQL_URL=postgres:\/\/localhost\/x and SERVICE_CH_URL=\(unset\)/);
  });
});

describe("local start on a busy port", () => {
  it("exits at once, non-zero, in one line naming the port, having started nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "jobhouse-busy-"));
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = (squatter.address() as { port: number }).port;
    try {
      const started = Date.now();
      const refused = spawnSync(process.execPath, [BIN, "local", "start", "--port", String(port)], {
        env: { ...process.env, SERVICE_HOME: home, SERVICE_SQL_URL: "", SERVICE_CH_URL: "" },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(refused.signal, "it had to be killed: it did not exit by itself").toBeNull();
      expect(refused.status).toBe(3);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(Date.now() - started).toBeLessThan(30_000);
      // Nothing was left behind that claims it is serving.
      expect(existsSync(join(home, "server.json"))).toBe(false);
    } finally {
      squatter.close();
    }
  });
});

describe("local start with a token", () => {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-token-"));
  const serverEnv = { ...process.env, SERVICE_HOME: home, SERVICE_API_TOKEN: "server-only-token", SERVICE_SQL_URL: "", SERVICE_CH_URL: "" };
  let server: ChildProcess;
  let url = "";
  beforeAll(async () => {
    ({ server, url } = await spawnLocalServer(serverEnv));
  });
  afterAll(() => {
    if (server.exitCode === null) server.kill("SIGTERM");
  });

  it("asks HTTP clients for the token but lets its own CLI in without one", async () => {
    expect((await fetch(`${url}/api/v0/objects`)).status).toBe(401);
    const cliEnv = { ...serverEnv, SERVICE_API_TOKEN: "" };
    const data = spawnSync(process.execPath, [BIN, "data", "list", "--json"], { env: cliEnv, encoding: "utf8" });
    expect(data.status, data.stderr).toBe(0);
    expect(JSON.parse(data.stdout)).toMatchObject({ total: 0 });
    expect(statSync(join(home, "server.json")).mode & 0o077).toBe(0);
  });
});

describe("local start keeps its files private", () => {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-private-"));
  const serverEnv = { ...process.env, SERVICE_HOME: home, SERVICE_API_TOKEN: "", SERVICE_SQL_URL: "", SERVICE_CH_URL: "" };
  let server: ChildProcess;
  let url = "";
  beforeAll(async () => {
    // A record left by a process long gone, with a mode anyone could read.
    writeFileSync(join(home, "server.json"), JSON.stringify({ url: "http://127.0.0.1:1", pid: 2 ** 22 + 1 }), { mode: 0o644 });
    chmodSync(join(home, "server.json"), 0o644);
    ({ server, url } = await spawnLocalServer(serverEnv));
  });
  afterAll(() => {
    if (server.exitCode === null) server.kill("SIGTERM");
  });

  /** Every folder and file under the home, with the permission bits group and others hold. */
  function openToOthers(dir: string): string[] {
    const found: string[] = [];
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if ((statSync(path).mode & 0o077) !== 0) found.push(`${path} ${(statSync(path).mode & 0o777).toString(8)}`);
      if (entry.isDirectory()) found.push(...openToOthers(path));
    }
    return found;
  }

  it("creates the stores, chDB's folder, task logs and server.json for their owner only", async () => {
    const response = await fetch(`${url}/api/v0/jobs:run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "sales" }) });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    expect(await endedStatus(url, id)).toBe("COMPLETED");
    expect(existsSync(join(home, "logs"))).toBe(true);
    expect(existsSync(join(home, "chdb"))).toBe(true);
    expect(statSync(join(home, "server.json")).mode & 0o777).toBe(0o600);
    expect(openToOthers(home)).toEqual([]);
  });
});

/** A fresh local-mode home, and the processes a suite starts in it, killed when the suite ends. */
function localHome(prefix: string, extra: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const env = { ...process.env, SERVICE_HOME: home, SERVICE_API_TOKEN: "", SERVICE_SQL_URL: "", SERVICE_CH_URL: "", ...extra };
  const processes: ChildProcess[] = [];
  afterAll(() => {
    for (const child of processes) if (child.exitCode === null) child.kill("SIGKILL");
  });
  return { home, env, processes };
}

describe("local start after a kill -9", () => {
  const { env: serverEnv, processes: servers } = localHome("jobhouse-restart-", { SERVICE_WORKER_TIMEOUT: "60" });

  it("retries the interrupted tasks at once, without waiting for the worker timeout", async () => {
    const first = await spawnLocalServer(serverEnv);
    servers.push(first.server);
    const started = await fetch(`${first.url}/api/v0/jobs:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "test/fixtures/jobs.ts:lingeringJob", kwargs: { ms: 1500 } }),
    });
    const { id } = (await started.json()) as { id: string };
    // Wait until the task runs, then kill the server in the middle of it.
    for (let i = 0; i < 300; i++) {
      const job = (await (await fetch(`${first.url}/api/v0/jobs/${id}`)).json()) as { tasks: { name: string; status: string }[] };
      if (job.tasks.some((t) => t.name === "lingering" && t.status === "RUNNING")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const killed = new Promise((resolve) => first.server.on("exit", resolve));
    first.server.kill("SIGKILL");
    await killed;

    const restartedAt = Date.now();
    const second = await spawnLocalServer(serverEnv);
    servers.push(second.server);
    expect(await endedStatus(second.url, id)).toBe("COMPLETED");
    // SERVICE_WORKER_TIMEOUT is 60 s: the job ended far sooner, so the dead worker was not waited for.
    expect(Date.now() - restartedAt).toBeLessThan(30_000);
    const job = (await (await fetch(`${second.url}/api/v0/jobs/${id}`)).json()) as { tasks: { name: string; id: string }[] };
    const lingering = job.tasks.find((t) => t.name === "lingering")!;
    const task = (await (await fetch(`${second.url}/api/v0/tasks/${lingering.id}`)).json()) as { attempt: number; error: string | null };
    expect(task.attempt).toBe(2);
    const workers = (await (await fetch(`${second.url}/api/v0/workers?status=LOST`)).json()) as { total: number };
    expect(workers.total).toBe(1);
  });
});

// Found by trying the product: a first user who ran a job from the CLI (in-process, no server)
// before the first `local start` never got the examples, which the README promises a fresh home.
describe("local start after the CLI ran a job in-process", () => {
  const { home, env: serverEnv, processes: servers } = localHome("jobhouse-cli-first-");

  it("registers the examples once, on the first server start", async () => {
    const ran = spawnSync(process.execPath, [BIN, "run-job", "test/fixtures/jobs.ts:hello", "--json"], { env: serverEnv, encoding: "utf8" });
    expect(ran.status, ran.stderr).toBe(0);
    const first = await spawnLocalServer(serverEnv);
    servers.push(first.server);
    const names = async (url: string) => ((await (await fetch(`${url}/api/v0/registered-jobs`)).json()) as { items: { name: string }[] }).items.map((r) => r.name).sort();
    expect(await names(first.url)).toEqual(["heartbeat", "primes", "sales"]);
    const stopped = new Promise((resolve) => first.server.on("exit", resolve));
    first.server.kill("SIGTERM");
    await stopped;
    expect(existsSync(join(home, "examples-offered"))).toBe(true);
  });
});

// Found by trying the product: with the server killed, `run-job --wait` waited without a word for
// a job nothing ran, and looked hung.
describe("run-job --wait when the server goes away", () => {
  const { env: serverEnv, processes } = localHome("jobhouse-gone-", { SERVICE_WORKER_TIMEOUT: "60" });

  it("says the server stopped answering, and goes on with the job when a server runs again", async () => {
    const first = await spawnLocalServer(serverEnv);
    processes.push(first.server);
    const waiting = spawn(process.execPath, [BIN, "run-job", "test/fixtures/jobs.ts:lingeringJob", "--kwargs", '{"ms":1500}', "--wait"], { env: serverEnv, stdio: ["ignore", "pipe", "pipe"] });
    processes.push(waiting);
    let err = "";
    let out = "";
    waiting.stderr!.on("data", (chunk) => (err += chunk));
    waiting.stdout!.on("data", (chunk) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => waiting.on("exit", resolve));
    for (let i = 0; i < 300 && !/RUNNING: 1 of/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toMatch(/RUNNING: 1 of/);
    const killed = new Promise((resolve) => first.server.on("exit", resolve));
    first.server.kill("SIGKILL");
    await killed;
    for (let i = 0; i < 100 && !err.includes("the server stopped answering"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toMatch(/the server stopped answering; job \d+ goes on when a server runs again/);
    const second = await spawnLocalServer(serverEnv);
    processes.push(second.server);
    expect(await exited).toBe(0);
    expect(out).toMatch(/COMPLETED/);
  }, 60_000);
});

// Found by trying the product: Ctrl-C on a `run-job --wait` that ran the job in-process left an
// ACTIVE worker and a RUNNING task, failed as lost at the next start.
describe("run-job --wait interrupted while it runs the job itself", () => {
  const { env, processes } = localHome("jobhouse-interrupt-");

  it("stops its worker, and the running task ends as an attempt interrupted by a stop", async () => {
    const waiting = spawn(process.execPath, [BIN, "run-job", "test/fixtures/jobs.ts:sleepy", "--kwargs", '{"ms":60000}', "--wait"], { env, stdio: ["ignore", "pipe", "pipe"] });
    processes.push(waiting);
    let err = "";
    waiting.stderr!.on("data", (chunk) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => waiting.on("exit", resolve));
    for (let i = 0; i < 400 && !/RUNNING: 1 of/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toMatch(/RUNNING: 1 of/);
    const jobId = /Job (\d+) started/.exec(err)![1]!;
    waiting.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(err).toMatch(/SIGINT: stopping this process's worker/);
    const cli = (...argv: string[]) => spawnSync(process.execPath, [BIN, ...argv], { env, encoding: "utf8" });
    const workers = JSON.parse(cli("worker", "list", "--json").stdout) as { items: { status: string }[] };
    expect(workers.items.map((w) => w.status)).toEqual(["STOPPED"]);
    const job = JSON.parse(cli("job", "get", jobId, "--json").stdout) as { status: string; tasks: { name: string; status: string; attempt: number }[] };
    // sleeper has no retries left: its interrupted attempt is its last, and the job ends with it.
    expect(job.tasks.find((t) => t.name === "sleeper")).toMatchObject({ status: "FAILED", attempt: 1 });
    expect(job.status).toBe("FAILED");
  }, 60_000);
});
