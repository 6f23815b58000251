// Reliability campaign (issue: distributed mode): three `worker start` processes and one
// `background start` on PostgreSQL + ClickHouse server; each cycle runs a job of 200 tasks that
// each append one line ("<index> <attempt>") to a file, and kills -9 a random worker at a random
// moment of the run (after a random number of its tasks completed), then restarts it. Reports jobs completed, stuck jobs, tasks lost (no line), duplicated
// effects (more than one line: at-least-once made visible), and for the tasks each kill orphaned
// the time from the kill until they were ready again (detection: bounded by SERVICE_WORKER_TIMEOUT
// + one background poll) and until they started (detection plus the wait for a free slot behind
// the job's other ready tasks).
//
// `--fault connections` cuts the processes' PostgreSQL connections instead (pg_terminate_backend of
// every backend the workers and the background process hold, once or twice 0-500 ms apart, at the
// same random moment), and kills no process: what a PostgreSQL restart or a network cut does to
// claims and completions in flight. Nothing is orphaned by a lost worker there; a task is retried
// only when an attempt it ran could not be recorded, and a process that exits is counted.
// Run: npm run bench:chaos [-- --cycles 100 --tasks 200 --worker-timeout 2 --fault kill|connections]

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openService } from "../src/app/context.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../src/operations/index.js";
import { sql } from "kysely";
import { freshStores } from "./distributed-stores.js";

const BIN = join(import.meta.dirname, "..", "bin", "jobhouse.mjs");
const args = new Map(process.argv.slice(2).map((a, i, all) => [a, all[i + 1]]));
const CYCLES = Number(args.get("--cycles") ?? 100);
const TASKS = Number(args.get("--tasks") ?? 200);
const WORKER_TIMEOUT_S = Number(args.get("--worker-timeout") ?? 2);
const WORKERS = 3;
const FAULT = args.get("--fault") ?? "kill";
if (FAULT !== "kill" && FAULT !== "connections") throw new Error(`--fault is kill or connections, got ${FAULT}`);
/** A job not finished this long after its start is stuck. */
const STUCK_AFTER_MS = 60_000;
/** The background loop looks every second (engine/background.ts). */
const BACKGROUND_POLL_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const stores = await freshStores("chaos");
const home = stores.home;
// The processes' connections carry a name of their own, so a cut finds theirs and not the bench's
// (nor anything else's in the shared database).
const APPLICATION = `chaos_${process.pid}`;
const processUrl = new URL(stores.env.SERVICE_SQL_URL!);
processUrl.searchParams.set("application_name", APPLICATION);
const env = { ...process.env, ...stores.env, SERVICE_SQL_URL: processUrl.toString(), SERVICE_WORKER_TIMEOUT: String(WORKER_TIMEOUT_S), SERVICE_LOG_LEVEL: "info" };
const service = await openService(loadConfig({ ...env, SERVICE_SQL_URL: stores.env.SERVICE_SQL_URL! }), { log: createLogger("error") });
/** Ends every backend the campaign's processes hold; how many. */
async function cutConnections(): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name IN (${APPLICATION}, ${`${APPLICATION}:listener`})`.execute(service.db);
  return Number(rows[0]?.n ?? 0);
}
const admin = { ...service, principal: SYNTHETIC_ADMIN };
const children = new Set<ChildProcess>();

function start(args: string[], readyLine: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  child.once("exit", () => {
    children.delete(child);
    // In the connections campaign no process is killed: any exit is a failure to survive a cut.
    if (FAULT === "connections" && !stopping) {
      totals.processesExited += 1;
      console.log(`${args.join(" ")} exited during the campaign`);
    }
  });
  let output = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      if (readyLine.test((output += chunk))) {
        output = "";
        resolve(child);
      }
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${output}`)));
  });
}
const startWorker = () => start(["worker", "start", "--concurrency", "4"], /worker \d+ started/);

const totals = { completed: 0, failed: 0, stuck: 0, lost: 0, unfinished: 0, duplicated: 0, extraLines: 0, orphaned: 0, killsThatOrphaned: 0, connectionsCut: 0, processesExited: 0 };
const detections: number[] = [];
const recoveries: number[] = [];
/** Each cycle's job, run → ended (or given up on), as the bench saw it. */
const jobDurations: number[] = [];
/** Per retried task: its new start − the kill. */
const taskRecoveries: number[] = [];
// Ctrl-C or a TERM ends the campaign at once, through the cleanup below (the cycle cut short is not counted).
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => (interrupted = true));
let cyclesRun = 0;
let stopping = false;
try {
  await invoke(operationByName.get("setup")!, {}, admin);
  await start(["background", "start"], /background process started/);
  const workers: ChildProcess[] = [];
  for (let i = 0; i < WORKERS; i++) workers.push(await startWorker());

  for (let cycle = 1; cycle <= CYCLES && !interrupted; cycle++) {
    const file = join(home, `effects-${cycle}.log`);
    const started = Date.now();
    const job = (await invoke(operationByName.get("run_job")!, { name: "bench/jobs.ts:appendMany", kwargs: { file, n: TASKS, maxMs: 60 } }, admin)) as { id: string };
    // A random worker at a random moment of the run: once a random number of the job's tasks (0 to
    // all but one) have completed, so the kill always falls while the job runs (0 = during the
    // entry task's fan-out). A fixed delay would often fall after a job this short had ended.
    const progress = Math.floor(Math.random() * TASKS);
    for (;;) {
      const { n } = await service.db
        .selectFrom("tasks")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("job_id", "=", BigInt(job.id))
        .where("kind", "=", "task")
        .where("status", "=", "COMPLETED")
        .executeTakeFirstOrThrow();
      if (Number(n) >= progress || Date.now() - started > STUCK_AFTER_MS || interrupted) break;
      await sleep(5);
    }
    const killedAt = Date.now();
    if (FAULT === "kill") {
      const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0]!;
      victim.kill("SIGKILL");
      workers.push(await startWorker());
    } else {
      totals.connectionsCut += await cutConnections();
      // Half the time a second cut while the first reconnections are under way.
      if (Math.random() < 0.5) {
        await sleep(Math.floor(Math.random() * 500));
        totals.connectionsCut += await cutConnections();
      }
    }

    let status = "RUNNING";
    // On Ctrl-C the workers got the signal too (one process group): stop waiting, clean up.
    while (Date.now() - started < STUCK_AFTER_MS && !interrupted) {
      status = (await service.db.selectFrom("jobs").select("status").where("id", "=", BigInt(job.id)).executeTakeFirstOrThrow()).status;
      if (status !== "PENDING" && status !== "RUNNING") break;
      await sleep(50);
    }
    if (interrupted) break; // a cycle cut short counts for nothing
    cyclesRun = cycle;
    const jobMs = Date.now() - started;
    jobDurations.push(jobMs);
    if (status === "COMPLETED") totals.completed += 1;
    else if (status === "FAILED") totals.failed += 1;
    else totals.stuck += 1;

    // Effects: one line per execution of a task body.
    const seen = new Map<number, number>();
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // no task ran at all
    }
    for (const line of text.split("\n").filter(Boolean)) {
      const index = Number(line.split(" ")[0]);
      seen.set(index, (seen.get(index) ?? 0) + 1);
    }
    const lost = Array.from({ length: TASKS }, (_, i) => i).filter((i) => !seen.has(i)).length;
    const duplicated = [...seen.values()].filter((n) => n > 1).length;
    totals.lost += lost;
    totals.duplicated += duplicated;
    totals.extraLines += [...seen.values()].reduce((sum, n) => sum + n - 1, 0);
    // And from the store: tasks of the job that never completed (lines prove a body ran, not that it finished).
    const unfinished = await service.db
      .selectFrom("tasks")
      .select("id")
      .where("job_id", "=", BigInt(job.id))
      .where("status", "!=", "COMPLETED")
      .execute();
    totals.unfinished += unfinished.length;

    // The kill's orphans: tasks of this job retried after a lost attempt; their new start − the kill.
    const retried = await service.db
      .selectFrom("tasks")
      .select(["started_at", "ready_at"])
      .where("job_id", "=", BigInt(job.id))
      .where("attempt", ">", 1) // the entry task (kind "job") too: a kill during the fan-out orphans it
      .execute();
    totals.orphaned += retried.length;
    if (retried.length > 0) {
      totals.killsThatOrphaned += 1;
      for (const t of retried) taskRecoveries.push(Number(t.started_at) - killedAt);
      detections.push(Math.max(...retried.map((t) => Number(t.ready_at))) - killedAt);
      recoveries.push(Math.max(...retried.map((t) => Number(t.started_at))) - killedAt);
    }
    console.log(
      `cycle ${cycle}: ${status} in ${jobMs} ms, ${lost} lost, ${unfinished.length} unfinished, ${duplicated} duplicated, ${retried.length} retried` +
        (retried.length > 0 ? `, ready again after ${detections[detections.length - 1]} ms, started after ${recoveries[recoveries.length - 1]} ms` : ""),
    );
    rmSync(file, { force: true });
  }
} finally {
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  await sleep(2000);
  for (const child of children) child.kill("SIGKILL");
  await service.close();
  await stores.drop();
}

const bound = WORKER_TIMEOUT_S * 1000 + BACKGROUND_POLL_MS;
console.log(
  `\n${cyclesRun} cycles of ${TASKS} tasks, ${WORKERS} workers, ${FAULT === "kill" ? "one kill -9" : "one or two cuts of every connection"} each: ` +
    `${FAULT === "kill" ? "" : `(fault: connections cut, ${totals.connectionsCut} backends ended, ${totals.processesExited} processes exited) `}` +
    `${totals.completed} completed, ${totals.failed} failed, ${totals.stuck} stuck; ` +
    `${totals.lost} tasks lost (no effect), ${totals.unfinished} tasks not completed, ${totals.duplicated} tasks with a duplicated effect (${totals.extraLines} extra lines), ${totals.orphaned} tasks retried; ` +
    `job run → end median ${median(jobDurations)} ms, max ${Math.max(...jobDurations)} ms` +
    (totals.killsThatOrphaned === 0 ? "" : "; " + orphanSummary()),
);

function orphanSummary(): string {
  return (
    `over ${totals.killsThatOrphaned} kills that orphaned a task: kill → ready again median ${median(detections)} ms, max ${Math.max(...detections)} ms ` +
    `(bound: SERVICE_WORKER_TIMEOUT ${WORKER_TIMEOUT_S} s + one ${BACKGROUND_POLL_MS} ms poll + backoff = ${bound} ms + 50 ms), ` +
    `${detections.filter((d) => d > bound + 50).length} over it; kill → started (latest retried task of each kill) median ${median(recoveries)} ms, max ${Math.max(...recoveries)} ms, ` +
    `${recoveries.filter((d) => d > bound + 50).length} over the bound; per retried task median ${median(taskRecoveries)} ms, max ${Math.max(...taskRecoveries)} ms`
  );
}
