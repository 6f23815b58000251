// Test data the benchmarks share: jobs that stay PENDING (no engine runs them), named job_0..job_19.
import type { OpenedService } from "../src/app/context.js";
import { startRun } from "../src/engine/start-run.js";

export async function seedPendingJobs(service: OpenedService, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await startRun(service.db, service.ids, service.clock, service.config, {
      name: `job_${i % 20}`,
      entrypoint: "bench/jobs.ts:noop",
      kwargs: { i },
      runType: "MANUAL",
      preservationMode: "NONE",
      registeredName: null,
    });
  }
}
