// Benchmark (issue: live events): GET /api/v0/events against the real binary.
//   - latency: jobs run one after another while one client listens; for every event, the time from
//     the change it reports (the row's created_at, started_at or completed_at) to its arrival. In
//     local mode (`local start`: the engine is in the server) and on PostgreSQL (`server start` plus
//     a `worker start` process, the events crossing over NOTIFY).
//   - load: a fan-out of N no-op tasks in local mode with 0 and with C stream clients (a separate
//     process that reads every byte), alternated; the fan-out's tasks/s and the server's RSS.
// Run: npm run bench:events [-- --runs 3 --jobs 200 --clients 200 --n 10000 --only latency|load]

import { mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type StreamEvent, createEventStreamParser, readEventStream } from "../src/models/events.js";
import { freshStores } from "./distributed-stores.js";
import { startChild, stopChildren } from "./processes.js";
import { freePort } from "../test/support/processes.js";

const BIN = join(import.meta.dirname, "..", "bin", "jobhouse.mjs");
const RUN_TS = join(import.meta.dirname, "..", "bin", "run-ts.mjs");
const argv = process.argv.slice(2);
const args = new Map(argv.map((a, i, all) => [a, all[i + 1]]));
const RUNS = Number(args.get("--runs") ?? 3);
const JOBS = Number(args.get("--jobs") ?? 200);
const CLIENTS = Number(args.get("--clients") ?? 200);
const N = Number(args.get("--n") ?? 10_000);
const ONLY = args.get("--only");

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- stream clients (child process)

if (argv[0] === "--clients-child") {
  const [url, count] = [argv[1]!, Number(argv[2])];
  let bytes = 0;
  let open = 0;
  let closed = 0;
  for (let i = 0; i < count; i++) {
    const req = request(url, { headers: { accept: "text/event-stream" } }, (res) => {
      open += 1;
      if (open === count) process.stdout.write("READY\n");
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("close", () => (closed += 1));
    });
    req.on("error", () => (closed += 1));
    req.end();
  }
  process.once("SIGTERM", () => {
    process.stdout.write(`CLIENTS ${JSON.stringify({ bytes, closed })}\n`);
    process.exit(0);
  });
  setInterval(() => undefined, 1_000);
} else {
  await main();
}

// ---------------------------------------------------------------- deployments

interface Deployment {
  url: string;
  serverPid: number;
  stop(): Promise<void>;
}

async function startLocal(): Promise<Deployment> {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-events-"));
  const port = await freePort();
  const env = { ...process.env, SERVICE_HOME: home, SERVICE_SQL_URL: "", SERVICE_CH_URL: "", SERVICE_API_TOKEN: "" };
  const server = await startChild([BIN, "local", "start", "--port", String(port)], env, /listening on/);
  return { url: `http://127.0.0.1:${port}`, serverPid: server.child.pid!, stop: () => stopChildren([server.child]) };
}

async function startDistributed(): Promise<Deployment> {
  const stores = await freshStores("events");
  const port = await freePort();
  const env = { ...process.env, ...stores.env, SERVICE_AUTH: "token", SERVICE_API_TOKEN: "", SERVICE_LOG_LEVEL: "info" };
  const server = await startChild([BIN, "server", "start", "--port", String(port)], env, /listening on/);
  const worker = await startChild([BIN, "worker", "start", "--concurrency", "4"], env, /worker \d+ started/);
  return {
    url: `http://127.0.0.1:${port}`,
    serverPid: server.child.pid!,
    async stop() {
      await stopChildren([worker.child, server.child]);
      await stores.drop();
    },
  };
}

async function api<T>(url: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}/api/v0${path}`, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

// ---------------------------------------------------------------- latency

interface Arrival {
  event: StreamEvent;
  at: number;
}

async function listen(url: string): Promise<{ arrivals: Arrival[]; waitFor(match: (e: StreamEvent) => boolean): Promise<void>; close(): void }> {
  const abort = new AbortController();
  const response = await fetch(`${url}/api/v0/events`, { signal: abort.signal });
  const arrivals: Arrival[] = [];
  const waiters: { match: (e: StreamEvent) => boolean; resolve: () => void }[] = [];
  const parse = createEventStreamParser((event) => {
    arrivals.push({ event, at: Date.now() });
    for (const waiter of [...waiters]) {
      if (waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  readEventStream(response.body!, parse).catch(() => undefined);
  return {
    arrivals,
    // An event that came already counts (a fast job may end before its run request returns).
    waitFor: (match) => new Promise<void>((resolve) => (arrivals.some((a) => match(a.event)) ? resolve() : waiters.push({ match, resolve }))),
    close: () => abort.abort(),
  };
}

interface Timed {
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

/** When the change an event reports happened, from the row it names. */
function changedAt(row: Timed, status: string): number | null {
  const at = status === "PENDING" ? row.created_at : status === "RUNNING" ? row.started_at : row.completed_at;
  return at === null ? null : Date.parse(at);
}

async function latency(deployment: Deployment): Promise<number[]> {
  const stream = await listen(deployment.url);
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const { id } = await api<{ id: string }>(deployment.url, "/jobs:run", { name: "test/fixtures/jobs.ts:hello", kwargs: { who: String(i) } });
    ids.push(id);
    await stream.waitFor((e) => e.type === "job.updated" && e.data.id === id && e.data.status === "COMPLETED");
  }
  await sleep(300);
  stream.close();
  const jobs = new Map<string, Timed & { tasks: (Timed & { id: string })[] }>();
  for (const id of ids) jobs.set(id, await api(deployment.url, `/jobs/${id}`));
  const tasks = new Map([...jobs.values()].flatMap((job) => job.tasks.map((task) => [task.id, task] as const)));
  const samples: number[] = [];
  for (const { event, at } of stream.arrivals) {
    const row = event.type === "job.updated" ? jobs.get(event.data.id) : event.type === "task.updated" ? tasks.get(event.data.id) : undefined;
    const when = row && "status" in event.data ? changedAt(row, event.data.status) : null;
    if (when) samples.push(at - when);
  }
  return samples;
}

// ---------------------------------------------------------------- load

interface LoadFigures {
  perSecond: number;
  rssStartMb: number;
  rssPeakMb: number;
  /** CPU seconds over the fan-out: the server's, and the stream readers' (another process). */
  serverCpuS: number;
  readersCpuS?: number;
  clientBytes?: number;
  clientsClosed?: number;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** CPU seconds a process has used (user + system), from /proc. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function load(clients: number): Promise<LoadFigures> {
  const deployment = await startLocal();
  try {
    const readers = clients > 0 ? await startChild([RUN_TS, "bench/events.ts", "--clients-child", `${deployment.url}/api/v0/events`, String(clients)], process.env, /READY/) : undefined;
    const rssStartMb = await rssMb(deployment.serverPid);
    let rssPeakMb = rssStartMb;
    const sampler = setInterval(() => void rssMb(deployment.serverPid).then((mb) => (rssPeakMb = Math.max(rssPeakMb, mb)), () => undefined), 200);
    const cpuAtStart = [await cpuSeconds(deployment.serverPid), readers ? await cpuSeconds(readers.child.pid!) : 0];
    const { id } = await api<{ id: string }>(deployment.url, "/jobs:run", { name: "bench/jobs.ts:fanOutNoop", kwargs: { n: N } });
    // The job's row in the list (its name's latest run): cheap to ask, unlike the 10,000-task detail.
    let job: Timed & { id: string; status: string };
    for (;;) {
      job = (await api<{ items: (Timed & { id: string; status: string })[] }>(deployment.url, "/jobs?name=fan_out_noop&limit=1")).items[0]!;
      if (job.id === id && job.status !== "PENDING" && job.status !== "RUNNING") break;
      await sleep(250);
    }
    clearInterval(sampler);
    const serverCpuS = (await cpuSeconds(deployment.serverPid)) - cpuAtStart[0]!;
    const readersCpuS = readers ? (await cpuSeconds(readers.child.pid!)) - cpuAtStart[1]! : undefined;
    const perSecond = N / ((Date.parse(job.completed_at!) - Date.parse(job.started_at!)) / 1000);
    let clientFigures = {};
    if (readers) {
      const summary = new Promise<string>((resolve) => readers.child.stdout!.on("data", () => /CLIENTS (.*)\n/.test(readers.output()) && resolve(/CLIENTS (.*)\n/.exec(readers.output())![1]!)));
      await stopChildren([readers.child]);
      const { bytes, closed } = JSON.parse(await summary) as { bytes: number; closed: number };
      clientFigures = { clientBytes: bytes, clientsClosed: closed };
    }
    return { perSecond, rssStartMb, rssPeakMb, serverCpuS, ...(readersCpuS === undefined ? {} : { readersCpuS }), ...clientFigures };
  } finally {
    await deployment.stop();
  }
}

// ---------------------------------------------------------------- main

function summarize(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `n=${sorted.length} median ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms`;
}

async function main(): Promise<void> {
  if (ONLY !== "load") {
    for (const [name, start] of [["local", startLocal], ["PostgreSQL + worker process", startDistributed]] as const) {
      const all: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const deployment = await start();
        try {
          const samples = await latency(deployment);
          all.push(...samples);
          console.log(`latency ${name}, run ${run + 1}: ${summarize(samples)}`);
        } finally {
          await deployment.stop();
        }
      }
      console.log(`latency ${name}, all runs: ${summarize(all)}`);
    }
  }
  if (ONLY !== "latency") {
    const without: LoadFigures[] = [];
    const withClients: LoadFigures[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Alternated, so drift of the machine falls on both sides.
      for (const clients of run % 2 === 0 ? [0, CLIENTS] : [CLIENTS, 0]) {
        const figures = await load(clients);
        (clients === 0 ? without : withClients).push(figures);
        console.log(`load, ${clients} clients, run ${run + 1}: ${JSON.stringify(figures)}`);
      }
    }
    const base = median(without.map((f) => f.perSecond));
    const loaded = median(withClients.map((f) => f.perSecond));
    // The machine drifts between runs more than the clients cost: each run's pair, measured back to
    // back, is the fairer comparison.
    const paired = median(withClients.map((f, i) => f.perSecond / without[i]!.perSecond));
    console.log(`load: ${base.toFixed(0)} tasks/s without clients, ${loaded.toFixed(0)} with ${CLIENTS} (${((loaded / base) * 100).toFixed(1)}%); median of each run's pair: ${(paired * 100).toFixed(1)}%`);
    console.log(`load: server CPU over the fan-out ${median(without.map((f) => f.serverCpuS)).toFixed(1)} s without clients, ${median(withClients.map((f) => f.serverCpuS)).toFixed(1)} s with; the readers' process ${median(withClients.map((f) => f.readersCpuS!)).toFixed(1)} s`);
    console.log(`load: server RSS peak ${median(without.map((f) => f.rssPeakMb)).toFixed(0)} MB without clients, ${median(withClients.map((f) => f.rssPeakMb)).toFixed(0)} MB with (start ${median(withClients.map((f) => f.rssStartMb)).toFixed(0)} MB)`);
  }
}
