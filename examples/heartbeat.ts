// A scheduled job: every five minutes, record how this host is doing. `local start` registers it on
// a fresh home with the schedule "*/5 * * * *"; register it yourself with
//   npx jobhouse register-job examples/heartbeat.ts:hostHeartbeat --schedule "*/5 * * * *"

import { freemem, loadavg, totalmem, uptime } from "node:os";
import { job, task } from "jobhouse";

export const sampleHost = task("sample_host", async (_args: Record<string, never>, ctx) => {
  const sample = {
    at: new Date().toISOString(),
    load_1m: Math.round(loadavg()[0]! * 100) / 100,
    memory_used_pct: Math.round((1 - freemem() / totalmem()) * 1000) / 10,
    uptime_h: Math.round(uptime() / 36) / 100,
  };
  ctx.log.info(`load ${sample.load_1m}, memory ${sample.memory_used_pct}% used`);
  return sample;
});

export const judge = task("judge", async ({ sample, max_load }: { sample: { load_1m: number; memory_used_pct: number }; max_load: number }) => {
  const warnings: string[] = [];
  if (sample.load_1m > max_load) warnings.push(`load ${sample.load_1m} is above ${max_load}`);
  if (sample.memory_used_pct > 90) warnings.push(`memory is ${sample.memory_used_pct}% used`);
  return { healthy: warnings.length === 0, warnings };
});

export const hostHeartbeat = job("heartbeat", async ({ max_load }: { max_load?: number }) => judge({ sample: sampleHost({}), max_load: max_load ?? 4 }));
