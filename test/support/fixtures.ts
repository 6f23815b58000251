// Test data arranged through the real stores and the data API: workers, task rows and data objects.

import { createObject } from "../../src/objects/data-object.js";
import type { DataScope } from "../../src/objects/object-registry.js";
import { scopePlane } from "../../src/objects/scope-plane.js";
import type { KyselyPlugin } from "kysely";
import type { Store } from "../../src/store/db.js";
import type { NewTaskRow } from "../../src/store/schema.js";
import { insertWorker } from "../../src/store/workers.js";
import type { Harness } from "./harness.js";

export async function addWorker(h: Harness): Promise<string> {
  const id = h.service.ids.next();
  await insertWorker(h.service.db, { id, hostname: "test-host", pid: 4242, concurrency: 4, maxTasks: null, nowMs: h.service.clock.now() });
  return id.toString();
}

/** The data scope of a harness, acting outside any job. */
export async function dataScope(h: Harness): Promise<DataScope> {
  return { db: h.service.db, columns: await h.service.columns(), ids: h.service.ids, clock: h.service.clock, jobId: null, taskId: null, attempt: null };
}

/** A real data object with `rows` rows: global when named, temp otherwise. Returns its name. */
export async function addObject(h: Harness, name: string, scope: "temp" | "global" = "global", rows = 3): Promise<string> {
  const ids = Array.from({ length: rows }, (_, i) => i);
  const object = await createObject(
    { id: ids, label: ids.map((i) => (i % 2 ? null : `row${i}`)), tags: ids.map(() => ["a"]) },
    scope === "global" ? { name, orderBy: ["id"] } : {},
    scopePlane(await dataScope(h)),
  );
  return object.name;
}

/** A child task row of `jobId` as a fan-out inserts it: `double` of `kwargs`, PENDING, no dependencies yet. */
export function childTaskRow(h: Harness, jobId: bigint, kwargs: string): NewTaskRow & { id: bigint } {
  return {
    id: h.service.ids.next(),
    job_id: jobId,
    name: "double",
    kind: "task",
    entrypoint: "test/fixtures/jobs.ts:double",
    status: "PENDING",
    attempt: 1,
    max_attempts: 1,
    kwargs,
    result_ref: null,
    error: null,
    log_path: null,
    worker_id: null,
    timeout_ms: null,
    backoff_ms: 1000,
    pending_deps: 0,
    created_at: h.service.clock.now(),
    ready_at: null,
    retry_after: null,
    claimed_at: null,
    started_at: null,
    completed_at: null,
  };
}

/**
 * A store that stops answering while `down` is true: the same store through a plugin that fails
 * every statement as a refused connection does (ECONNREFUSED), for code that must ride out outages.
 */
export function storeOutage(db: Store, down = false): { db: Store; down: boolean } {
  const outage = { db, down };
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (outage.down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  outage.db = db.withPlugin(plugin);
  return outage;
}
