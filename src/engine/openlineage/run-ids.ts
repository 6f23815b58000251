// OpenLineage run ids derived from our own ids, so any process (and a consumer) names the same run.

import { createHash } from "node:crypto";

/** jobhouse's own name space for RFC 4122 §4.3 name-based UUIDs (fixed forever: run ids depend on it). */
export const JOBHOUSE_UUID_NAMESPACE = "051f355a-db8f-4538-a047-5554c8fbec35";

/** A version-5 UUID (SHA-1 over the name space's 16 bytes, then the name) with the RFC 4122 variant. */
export function nameBasedUuid(name: string, namespace = JOBHOUSE_UUID_NAMESPACE): string {
  const hash = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The run of a job: one per job id. */
export const jobRunId = (jobId: bigint): string => nameBasedUuid(`jobhouse:job:${jobId}`);

/** The run of one attempt of a task: each attempt is its own run. */
export const taskRunId = (taskId: bigint, attempt: number): string => nameBasedUuid(`jobhouse:task:${taskId}:${attempt}`);
