// The distributed deployment as separate processes of the real binary over PostgreSQL and the
// ClickHouse server: `server start` (no workers), `worker start` and `background start`.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../src/store/db.js";
import { BIN, freePort } from "./support/processes.js";
import { BACKENDS } from "./support/backends.js";
import { waitFor } from "./support/engine.js";
import { jobStatusesIn, openEventStream } from "./support/event-client.js";

const distributed = BACKENDS.find((b) => b.name === "distributed");



/** Processes boot in seconds on a busy machine: a longer bound than in-process waits. */
const waitLong = <T>(what: string, probe: () => Promise<T | null | undefined | false>) => waitFor(what, probe, 30_000);

describe.runIf(distributed)("distributed processes", () => {
  let env: NodeJS.ProcessEnv;
  let stores: Record<string, string>;
  let url = "";
  const processes: ChildProcess[] = [];
  /** Workers the server started (detached, not our children): stopped by pid if a test failed. */
  const spawnedPids: number[] = [];
  const spawnProcess = (args: string[], extra: Record<string, string> = {}) => {
    let stderr = "";
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    processes.push(child);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, log: () => stderr };
  };
  const api = async <T>(path: string, init?: RequestInit): Promise<T> => (await (await fetch(`${url}/api/v0${path}`, init)).json()) as T;
  const runJob = (name: string, kwargs: Record<string, unknown> = {}) =>
    api<{ id: string }>("/jobs:run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, kwargs }) });
  const jobStatus = async (id: string) => (await api<{ status: string }>(`/jobs/${id}`)).status;
  /** A schedule that never comes due by itself during a test (midnight of January 1, UTC). */
  const registerYearly = async (name: string, entrypoint: string) => {
    const registered = await fetch(`${url}/api/v0/registered-jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, entrypoint, schedule: "0 0 1 1 *" }),
    });
    expect(registered.status).toBe(201);
  };
  const workers = async () => (await api<{ items: { id: string; status: string; pid: number }[] }>("/workers?limit=100")).items;

  beforeAll(async () => {
    stores = await distributed!.freshEnv();
    env = { ...process.env, ...stores, SERVICE_AUTH: "token", SERVICE_API_TOKEN: "", SERVICE_WORKER_TIMEOUT: "2" };
  });
  afterAll(async () => {
    for (const child of processes) if (child.exitCode === null) child.kill("SIGKILL");
    for (const pid of spawnedPids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await distributed!.dispose(stores);
  });

  it("a worker refuses a schema older than its build, in one line", () => {
    const refused = spawnSync(process.execPath, [BIN, "worker", "start"], { env, encoding: "utf8", timeout: 30_000 });
    expect(refused.status).toBe(10);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(/older than this build .*run `jobhouse migrate` first/);
    expect(spawnSync(process.execPath, [BIN, "background", "start"], { env, encoding: "utf8", timeout: 30_000 }).status).toBe(10);
  });

  // A CLI newer than the schema answered "unexpected failure: relation "job_counts" does not exist".
  it("the CLI refuses a schema older than its build in one line saying to migrate", async () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env, encoding: "utf8", timeout: 30_000 });
    expect(cli("migrate").status).toBe(0);
    const client = new pg.Client({ connectionString: env.SERVICE_SQL_URL });
    await client.connect();
    try {
      // As a build before the last migration left it (its record gone; put back below).
      const { rows } = await client.query<{ name: string; timestamp: string }>("DELETE FROM schema_migrations WHERE name = (SELECT max(name) FROM schema_migrations) RETURNING name, timestamp");
      try {
        const refused = cli("job", "list");
        expect(refused.status).toBe(10);
        expect(refused.stderr.trim().split("\n")).toHaveLength(1);
        expect(refused.stderr).toMatch(new RegExp(`older than this build \\(missing ${rows[0]!.name}\\): run \`jobhouse migrate\` first`));
      } finally {
        await client.query("INSERT INTO schema_migrations (name, timestamp) VALUES ($1, $2)", [rows[0]!.name, rows[0]!.timestamp]);
      }
    } finally {
      await client.end();
    }
    expect(cli("job", "list").status).toBe(0);
  });

  // SERVICE_WORKER_CONCURRENCY=0.5 was floored to a worker of no slots, which ran nothing and
  // made GET /workers a 500 (its row failed the WorkerView); "1e3" was a thousand task threads.
  it("a worker refuses a concurrency or task count that is not a positive integer, in one line", () => {
    const refuse = (args: string[], extra: Record<string, string> = {}) =>
      spawnSync(process.execPath, [BIN, "worker", "start", ...args], { env: { ...env, ...extra }, encoding: "utf8", timeout: 30_000 });
    for (const [args, extra, code, message] of [
      [[], { SERVICE_WORKER_CONCURRENCY: "0.5" }, 2, /SERVICE_WORKER_CONCURRENCY must be a positive integer, got "0\.5"/],
      [["--concurrency", "1e3"], {}, 2, /--concurrency must be a positive integer, got "1e3"/],
      [["--max-tasks", "0x10"], {}, 2, /--max-tasks must be a positive integer, got "0x10"/],
      // 100,000 task threads ran out of memory; 2^31 failed to register and then hung for good.
      [["--concurrency", "100000"], {}, 2, /--concurrency must be at most 256, got "100000"/],
      [[], { SERVICE_WORKER_CONCURRENCY: "257" }, 2, /SERVICE_WORKER_CONCURRENCY must be at most 256, got "257"/],
      [["--max-tasks", "2147483648"], {}, 2, /--max-tasks must be at most 2147483647, got "2147483648"/],
    ] as const) {
      const refused = refuse([...args], extra);
      expect(refused.status, args.join(" ")).toBe(code);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toMatch(message);
    }
  });

  it("a server runs no job until a worker starts; the worker stops on SIGTERM as STOPPED", async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const server = spawnProcess(["server", "start", "--port", String(port)]);
    await waitLong("the server", async () => server.log().includes("listening on"));
    const { id } = await runJob("test/fixtures/jobs.ts:pipeline", { n: 4 });
    expect(await jobStatus(id)).toBe("PENDING");

    const worker = spawnProcess(["worker", "start", "--concurrency", "2"]);
    await waitLong("the job to complete", async () => (await jobStatus(id)) === "COMPLETED");
    const [registered] = await workers();
    expect(registered).toMatchObject({ status: "ACTIVE", pid: worker.child.pid });
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect((await workers()).find((w) => w.pid === worker.child.pid)!.status).toBe("STOPPED");
    // Found by trying the product: each new connection's settings were queued behind one another,
    // and pg warned of it (deprecated, refused by pg 9) at every worker start.
    for (const process of [server, worker]) expect(process.log()).not.toMatch(/Warning/);
  });

  it("a worker with --max-tasks exits by itself after that many tasks", async () => {
    const { id } = await runJob("test/fixtures/jobs.ts:pipeline", { n: 1 });
    const worker = spawnProcess(["worker", "start", "--max-tasks", "1"]);
    expect(await worker.exited).toBe(0);
    expect((await workers()).find((w) => w.pid === worker.child.pid)!.status).toBe("STOPPED");
    // One of the job's three tasks ran; another worker finishes the rest.
    expect(await jobStatus(id)).not.toBe("COMPLETED");
    const rest = spawnProcess(["worker", "start"]);
    await waitLong("the job to complete", async () => (await jobStatus(id)) === "COMPLETED");
    rest.child.kill("SIGTERM");
    expect(await rest.exited).toBe(0);
  });

  it("the server's event stream carries what a worker process does, its log lines included (NOTIFY)", async () => {
    const stream = await openEventStream(`${url}/api/v0/events`);
    try {
      const { id } = await runJob("test/fixtures/jobs.ts:talkerJob", { lines: 3, everyMs: 50, waitMs: 500 });
      const worker = spawnProcess(["worker", "start"]);
      // Stopped however the test ends: a worker left running would take the next tests' tasks.
      const stopWorker = async () => {
        worker.child.kill("SIGTERM");
        expect(await worker.exited).toBe(0);
      };
      const talker = await waitLong("the talker task", async () => (await api<{ tasks: { id: string; name: string }[] }>(`/jobs/${id}`)).tasks.find((t) => t.name === "talker"));
      const logs = await openEventStream(`${url}/api/v0/events?task_id=${talker.id}`);
      try {
        await stream.next("the job's end", (e) => e.type === "job.updated" && e.data.id === id && e.data.status === "COMPLETED", 30_000);
        expect(jobStatusesIn(stream.events, id)).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
        await logs.next("the task's end", (e) => e.type === "task.updated" && e.data.status === "COMPLETED");
        const text = logs.events.flatMap((e) => (e.type === "task.log" ? [e.data.text] : [])).join("");
        expect(text.match(/INFO line \d /g), logs.text()).toEqual(["INFO line 1 ", "INFO line 2 ", "INFO line 3 "]);
      } finally {
        logs.close();
        await stopWorker();
      }
    } finally {
      stream.close();
    }
  });

  it("SIGTERM gives running tasks the grace period: one that outstays it fails as an attempt and another worker retries it", async () => {
    const leaving = spawnProcess(["worker", "start"]);
    const { id } = await runJob("test/fixtures/jobs.ts:overstayJob");
    const overstayId = await waitLong("the overstaying task to run", async () => {
      const job = await api<{ tasks: { id: string; name: string; status: string }[] }>(`/jobs/${id}`);
      return job.tasks.find((t) => t.name === "overstay" && t.status === "RUNNING")?.id;
    });
    const signalled = Date.now();
    leaving.child.kill("SIGTERM");
    // An operator's reflex: a second signal during the grace period. It was the default kill (143),
    // the worker left ACTIVE and its task held until the worker was declared LOST.
    await waitLong("the worker to hear the first signal", async () => leaving.log().includes("got SIGTERM"));
    leaving.child.kill("SIGINT");
    expect(await leaving.exited).toBe(0);
    expect(leaving.log()).toMatch(/worker \d+ got SIGINT again: it is already stopping and ends within \d+ s; kill -9 ends it at once/);
    // The grace period is 5 s; the task would have run for two minutes.
    expect(Date.now() - signalled).toBeLessThan(30_000);
    expect((await workers()).find((w) => w.pid === leaving.child.pid)!.status).toBe("STOPPED");
    const interrupted = await api<{ status: string; attempt: number; error: string }>(`/tasks/${overstayId}`);
    expect(interrupted).toMatchObject({ status: "PENDING", attempt: 2 });
    expect(interrupted.error).toMatch(/grace period/);
    const heir = spawnProcess(["worker", "start"]);
    await waitLong("the job to complete", async () => (await jobStatus(id)) === "COMPLETED");
    expect(await api<{ result_ref: unknown }>(`/tasks/${overstayId}`)).toMatchObject({ result_ref: { attempt: 2 } });
    heir.child.kill("SIGTERM");
    expect(await heir.exited).toBe(0);
  });

  it("kill -9 of a worker mid-task: background start declares it LOST and another worker retries the task", async () => {
    const background = spawnProcess(["background", "start"]);
    const doomed = spawnProcess(["worker", "start"]);
    const { id } = await runJob("test/fixtures/jobs.ts:lingeringJob", { ms: 3000 });
    await waitLong("the lingering task to run", async () => {
      const job = await api<{ tasks: { name: string; status: string }[] }>(`/jobs/${id}`);
      return job.tasks.some((t) => t.name === "lingering" && t.status === "RUNNING");
    });
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    await waitLong("the killed worker to be LOST", async () => (await workers()).find((w) => w.pid === doomed.child.pid)?.status === "LOST");
    const rescuer = spawnProcess(["worker", "start"]);
    await waitLong("the job to complete", async () => (await jobStatus(id)) === "COMPLETED");
    const job = await api<{ tasks: { id: string; name: string }[] }>(`/jobs/${id}`);
    const task = await api<{ attempt: number }>(`/tasks/${job.tasks.find((t) => t.name === "lingering")!.id}`);
    expect(task.attempt).toBe(2);
    for (const p of [rescuer, background]) {
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    }
  });

  // A SIGTERM during startup (seconds on a busy machine) killed the process by default: exit 143.
  it("ends with 0 when SIGTERM comes during startup, while its store check waits", async () => {
    // A ClickHouse that accepts the connection and never answers holds each process in its check.
    let connected = 0;
    const silent = createServer(() => void connected++);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const chUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/db`;
      for (const args of [["worker", "start"], ["background", "start"], ["server", "start", "--port", String(await freePort())]]) {
        const before = connected;
        const p = spawnProcess(args, { SERVICE_CH_URL: chUrl });
        await waitLong(`${args[0]} to be checking ClickHouse`, async () => connected > before);
        p.child.kill("SIGTERM");
        expect(await p.exited, `${args.join(" ")}: ${p.log()}`).toBe(0);
      }
    } finally {
      silent.close();
    }
  });

  // Loading the binary's modules takes a second; a SIGTERM then was still the default kill (143).
  it("ends with 0 when SIGTERM comes while the binary is still loading", async () => {
    for (const args of [["worker", "start"], ["background", "start"], ["server", "start", "--port", String(await freePort())]]) {
      // At debug level the binary says when it listens; loading everything else takes a second more.
      const p = spawnProcess(args, { SERVICE_LOG_LEVEL: "debug" });
      await waitLong(`${args[0]} to be loading`, async () => p.log().includes("DEBUG loading;"));
      p.child.kill("SIGTERM");
      expect(await p.exited, `${args.join(" ")}: ${p.log()}`).toBe(0);
      expect(p.log(), args.join(" ")).not.toMatch(/\n\s+at /);
    }
  });

  // Found by trying the product: a worker declared LOST exited 0, so a supervisor's restart on
  // failure (systemd Restart=on-failure) left the fleet short after a long store outage.
  it("a worker the store says is LOST exits with 75, for its supervisor to start it again", async () => {
    const worker = spawnProcess(["worker", "start"]);
    const registered = await waitLong("the worker to register", async () => (await workers()).find((w) => w.pid === worker.child.pid && w.status === "ACTIVE"));
    const db = openStore({ dialect: "postgres", location: stores.SERVICE_SQL_URL! });
    try {
      await db.updateTable("workers").set({ status: "LOST" }).where("id", "=", BigInt(registered.id)).execute();
    } finally {
      await db.destroy();
    }
    expect(await worker.exited, worker.log()).toBe(75);
    expect(worker.log()).toMatch(/worker \d+ exited: it was declared LOST .*exit code 75/);
  });

  it("POST /workers starts a detached worker that registers and obeys stop_worker; a failed start is 503", async () => {
    const before = new Set((await workers()).map((w) => w.pid));
    const { id } = await runJob("test/fixtures/jobs.ts:hello");
    const started = await fetch(`${url}/api/v0/workers`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ max_tasks: 5 }) });
    expect(started.status).toBe(202);
    expect(started.headers.get("location")).toBe("/api/v0/workers");
    await waitLong("the job to complete", async () => (await jobStatus(id)) === "COMPLETED");
    const spawned = await waitLong("the spawned worker to register", async () => (await workers()).find((w) => !before.has(w.pid)));
    spawnedPids.push(spawned.pid);
    expect(spawned.pid).not.toBe(process.pid);
    // No terminal reads a detached child: what it would print is in $SERVICE_LOG_DIR/workers/.
    const outputs = join(env.SERVICE_HOME!, "logs", "workers");
    await waitLong("the spawned worker's startup line in its file", async () =>
      readdirSync(outputs).some((f) => readFileSync(join(outputs, f), "utf8").includes(`worker ${spawned.id} started`)),
    );
    // Stopped through SQL (stop_worker), it exits on its own: the server tracks no child.
    await fetch(`${url}/api/v0/workers/${spawned.id}/stop`, { method: "POST" });
    await waitLong("the spawned worker to stop", async () => (await workers()).find((w) => w.id === spawned.id)?.status === "STOPPED");

    const port = await freePort();
    const broken = spawnProcess(["server", "start", "--port", String(port)], { SERVICE_WORKER_COMMAND: "/nonexistent/jobhouse" });
    await waitLong("the second server", async () => broken.log().includes("listening on"));
    const refused = await fetch(`http://127.0.0.1:${port}/api/v0/workers`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: "worker_spawn_failed", detail: expect.stringContaining("/nonexistent/jobhouse does not exist") });
    // The operator sees it too (a 5xx is logged at error; this one was silent).
    await waitLong("the refusal in the server's log", async () => /ERROR POST \/api\/v0\/workers: 503 worker_spawn_failed: .*\/nonexistent\/jobhouse does not exist/.test(broken.log()));
    broken.child.kill("SIGTERM");
    expect(await broken.exited).toBe(0);
  });

  it("a fan-out of 500 tasks over three workers runs every task exactly once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-effects-"));
    const file = join(dir, "effects.log");
    try {
      const before = new Set((await workers()).map((w) => w.id));
      const crew = [0, 1, 2].map(() => spawnProcess(["worker", "start", "--concurrency", "4"]));
      await waitLong("three workers", async () => (await workers()).filter((w) => !before.has(w.id) && w.status === "ACTIVE").length === 3);
      const { id } = await runJob("test/fixtures/side-effects.ts:appendLines", { file, n: 500 });
      await waitLong("the fan-out to complete", async () => (await jobStatus(id)) === "COMPLETED");
      // Count effects, not statuses: every index once, and nothing else.
      const lines = readFileSync(file, "utf8").trim().split("\n");
      const indexes = lines.map((line) => Number(line.split(" ")[0])).sort((a, b) => a - b);
      expect(lines).toHaveLength(500);
      expect(indexes).toEqual(Array.from({ length: 500 }, (_, i) => i));
      for (const worker of crew) worker.child.kill("SIGTERM");
      expect(await Promise.all(crew.map((w) => w.exited))).toEqual([0, 0, 0]);
      // The work was shared: completed counts (brought up to date at stop) add up, over several workers.
      const mine = (await api<{ items: { id: string; status: string; tasks_completed: number }[] }>("/workers?limit=100")).items.filter((w) => !before.has(w.id));
      expect(mine.map((w) => w.status)).toEqual(["STOPPED", "STOPPED", "STOPPED"]);
      expect(mine.reduce((sum, w) => sum + w.tasks_completed, 0)).toBe(501); // the entry task too
      expect(mine.filter((w) => w.tasks_completed > 0).length).toBeGreaterThan(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Found by trying the product: with its timers unref'd, the background process exited (13,
  // nothing logged) the moment its listener connection dropped, and lost-worker detection and
  // schedules stopped with it.
  it("background start and worker start outlive a dropped listener connection, and still stop with 0", async () => {
    const background = spawnProcess(["background", "start"]);
    const worker = spawnProcess(["worker", "start"]);
    await waitLong("both to start", async () => background.log().includes("background process started") && / started \(pid/.test(worker.log()));
    const client = new pg.Client({ connectionString: stores.SERVICE_SQL_URL });
    await client.connect();
    try {
      const listeners = async () =>
        Number((await client.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'jobhouse-listener'")).rows[0].n);
      await waitLong("their listeners", async () => (await listeners()) >= 2);
      // Every connection of theirs (an idle pool's too), as a PostgreSQL restart would.
      await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      await waitLong("the listeners to reconnect", async () => (await listeners()) >= 2);
    } finally {
      await client.end();
    }
    expect(background.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    for (const p of [background, worker]) {
      p.child.kill("SIGTERM");
      expect(await p.exited, p.log()).toBe(0);
    }
    expect(worker.log()).toMatch(/worker \d+ stopped/);
  });

  it("two background processes fire each due time of a schedule once", async () => {
    const name = `new_year_${Date.now()}`;
    // A schedule that cannot come due by itself during the test (midnight of January 1, UTC): the
    // due times are made by the test, so a minute boundary passing mid-test adds no run.
    await registerYearly(name, "test/fixtures/jobs.ts:hello");
    const pair = [spawnProcess(["background", "start"]), spawnProcess(["background", "start"])];
    await waitLong("both background processes", async () => pair.every((p) => p.log().includes("background process started")));
    const client = new pg.Client({ connectionString: stores.SERVICE_SQL_URL });
    const gate = new pg.Client({ connectionString: stores.SERVICE_SQL_URL });
    await client.connect();
    await gate.connect();
    const runs = async () => (await api<{ total: number }>(`/jobs?name=${name}&limit=1`)).total;
    const blockedOnSchedules = async () =>
      Number((await client.query("SELECT count(*) AS n FROM pg_locks WHERE relation = 'registered_jobs'::regclass AND NOT granted")).rows[0].n);
    try {
      for (let fire = 1; fire <= 3; fire++) {
        // Due in 2 s, behind a gate: the lock lets both processes read the due schedule (SELECT) but
        // holds their UPDATE of it. Once both wait on it, each has read the same due time and is
        // firing it; released, they race for real, and only the guard on the old fire time keeps
        // it to one run.
        const due = Date.now() + 2000;
        await client.query("UPDATE registered_jobs SET next_run_at = $1 WHERE name = $2", [due, name]);
        await gate.query("BEGIN");
        await gate.query("LOCK TABLE registered_jobs IN EXCLUSIVE MODE");
        expect(Date.now()).toBeLessThan(due); // the gate closed before the due time
        await waitLong(`both processes to try fire ${fire}`, async () => (await blockedOnSchedules()) === 2);
        await gate.query("COMMIT");
        await waitLong(`fire ${fire}`, async () => (await runs()) >= fire);
        // Both loops (every second) have looked at it since: a second fire would show by now.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        expect(await runs()).toBe(fire);
      }
    } finally {
      await gate.query("ROLLBACK").catch(() => undefined);
      await gate.end();
      await client.end();
    }
    const fired = pair.map((p) => (p.log().match(new RegExp(`fired ${name}`, "g")) ?? []).length);
    expect(fired[0]! + fired[1]!).toBe(3);
    for (const p of pair) {
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    }
  });

  it("a background process killed while firing a schedule leaves it due: the next one fires it", async () => {
    const name = `slow_${Date.now()}`;
    await registerYearly(name, "test/fixtures/slow-import.ts:slow");
    const client = new pg.Client({ connectionString: stores.SERVICE_SQL_URL });
    await client.connect();
    const runs = async () => (await api<{ total: number }>(`/jobs?name=${name}&limit=1`)).total;
    try {
      const doomed = spawnProcess(["background", "start"]);
      await waitLong("the background process", async () => doomed.log().includes("background process started"));
      const due = Date.now() - 1000;
      await client.query("UPDATE registered_jobs SET next_run_at = $1 WHERE name = $2", [due, name]);
      // Its loop (every second) is now planning the run: loading a module that takes 4 s.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      doomed.child.kill("SIGKILL");
      await doomed.exited;
      expect(await runs()).toBe(0);
      const { rows } = await client.query("SELECT next_run_at FROM registered_jobs WHERE name = $1", [name]);
      expect(Number(rows[0].next_run_at)).toBe(due); // still due, not moved past a run never made
      const heir = spawnProcess(["background", "start"]);
      await waitLong("the heir to fire it", async () => (await runs()) === 1);
      heir.child.kill("SIGTERM");
      expect(await heir.exited).toBe(0);
    } finally {
      await client.end();
    }
  });
});
