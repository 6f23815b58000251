// Test data arranged through the real stores and the data API: workers and data objects.

import { createObject } from "../../src/objects/data-object.js";
import type { DataScope } from "../../src/objects/object-registry.js";
import { scopePlane } from "../../src/objects/scope-plane.js";
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
