// Prometheus metrics for GET /metrics (prom-client): what the stores hold (jobs and tasks by
// status, the ready queue and how long its oldest task has waited), what this process heard on the
// change feed (transitions, task durations), its HTTP requests, its OpenLineage deliveries, and the
// process itself.

import { sql } from "kysely";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { OpenLineageEmitter } from "../engine/openlineage/index.js";
import type { ServiceContext } from "../operations/index.js";
import type { MetricsEndpoint } from "../surfaces/rest/app.js";
import { jobCountsByStatus } from "../store/job-counts.js";
import { TASK_STATUSES } from "../core/statuses.js";

const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED", "SKIPPED"]);
/** Task starts remembered for durations; beyond this the oldest are forgotten (a task that never ends). */
const STARTS_KEPT = 100_000;

export function createMetrics(service: Pick<ServiceContext, "db" | "changes" | "clock"> & { openLineage?: OpenLineageEmitter | null }): MetricsEndpoint {
  const { db, changes, clock, openLineage } = service;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const countTasksByStatus = async () =>
    db.selectFrom("tasks").select(["status", sql<number>`count(*)`.as("n")]).groupBy("status").execute();

  new Gauge({
    name: "jobhouse_jobs",
    help: "Jobs in the store, by status",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      // Kept by triggers (store/job-counts.ts): no count of the jobs table at every scrape.
      for (const [status, n] of Object.entries(await jobCountsByStatus(db))) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "jobhouse_tasks",
    help: "Tasks in the store, by status",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      // Every status, none at 0 included, as jobhouse_jobs: a series that vanishes reads as no data.
      const counts = new Map((await countTasksByStatus()).map((row) => [row.status, Number(row.n)]));
      for (const status of TASK_STATUSES) this.set({ status }, counts.get(status) ?? 0);
    },
  });
  // The queue as workers see it: tasks that may be claimed now, and the longest any has waited.
  // A scrape collects every metric at once, so the two gauges share one query in flight.
  let queueReading: Promise<{ depth: number; oldestWaitS: number }> | undefined;
  const readQueue = () =>
    (queueReading ??= (async () => {
      const now = clock.now();
      const { n, oldest } = await db
        .selectFrom("tasks")
        .select([sql<number>`count(*)`.as("n"), sql<number | null>`min(ready_at)`.as("oldest")])
        .where("status", "=", "PENDING")
        .where("ready_at", "<=", BigInt(now))
        .executeTakeFirstOrThrow();
      return { depth: Number(n), oldestWaitS: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000) };
    })().finally(() => (queueReading = undefined)));
  new Gauge({
    name: "jobhouse_queue_depth",
    help: "Tasks ready to be claimed now (PENDING, ready_at reached)",
    registers: [registry],
    async collect() {
      this.set((await readQueue()).depth);
    },
  });
  new Gauge({
    name: "jobhouse_queue_oldest_wait_seconds",
    help: "How long the oldest claimable task has waited to be claimed (0 when none waits): the claim latency a new task faces",
    registers: [registry],
    async collect() {
      this.set((await readQueue()).oldestWaitS);
    },
  });

  const jobTransitions = new Counter({
    name: "jobhouse_job_transitions_total",
    help: "Job transitions this process heard on the change feed, by the status entered",
    labelNames: ["status"],
    registers: [registry],
  });
  const taskTransitions = new Counter({
    name: "jobhouse_task_transitions_total",
    help: "Task transitions this process heard on the change feed, by the status entered",
    labelNames: ["status"],
    registers: [registry],
  });
  const taskDurations = new Histogram({
    name: "jobhouse_task_duration_seconds",
    help: "Task attempts from RUNNING to their end, as heard by this process, by outcome",
    labelNames: ["status"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1800],
    registers: [registry],
  });
  const requests = new Histogram({
    name: "jobhouse_http_request_duration_seconds",
    help: "HTTP requests by method, route (its pattern) and status",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });

  // Only with an emitter configured (docs/OPENLINEAGE.md): counted once per sink.
  if (openLineage) {
    new Counter({
      name: "jobhouse_openlineage_events_total",
      help: "OpenLineage RunEvents of this process: sent (accepted by a sink), dropped (a full queue, shutdown) or failed (given up after retries)",
      labelNames: ["result"],
      registers: [registry],
      collect() {
        this.reset();
        for (const [result, n] of Object.entries(openLineage.counts())) this.inc({ result }, n);
      },
    });
  }

  const started = new Map<bigint, number>();
  const unsubscribe = changes.subscribe(({ change }) => {
    if (change.type === "job") jobTransitions.inc({ status: change.status });
    if (change.type !== "task") return;
    taskTransitions.inc({ status: change.status });
    if (change.status === "RUNNING") {
      if (started.size >= STARTS_KEPT) started.delete(started.keys().next().value!);
      started.set(change.id, performance.now());
      return;
    }
    const at = started.get(change.id);
    if (at === undefined) return;
    started.delete(change.id);
    // A retry's PENDING ends the attempt too (as a failure); its next RUNNING starts another.
    if (TERMINAL.has(change.status) || change.status === "PENDING") {
      taskDurations.observe({ status: change.status === "PENDING" ? "RETRIED" : change.status }, (performance.now() - at) / 1000);
    }
  });

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observeRequest: (method, route, status, seconds) => requests.observe({ method, route, status: String(status) }, seconds),
    close() {
      unsubscribe();
      registry.clear();
    },
  };
}
