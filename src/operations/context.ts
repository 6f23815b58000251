// What every operation handler receives: the stores, the clock, the id generator and the caller.

import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config.js";
import type { IdGenerator } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import type { ColumnStore } from "../data/client.js";
import type { ChangeFeed } from "../engine/changes.js";
import type { EventHub } from "../engine/event-hub.js";
import type { JobInspector } from "../engine/job-inspector.js";
import type { Role } from "../models/system.js";
import type { Store } from "../store/db.js";
import type { ResultCache } from "./result-cache.js";

/** One role type: the wire enum of models/system.ts. */
export type { Role } from "../models/system.js";

/** SPEC "Principal (internal)". */
export interface Principal {
  user_id: string;
  username: string;
  role: Role;
}

/** CONTRACT §8 / SPEC Scheme B rule 7: with auth disabled every caller is this admin. */
export const SYNTHETIC_ADMIN: Principal = Object.freeze({ user_id: "0", username: "admin", role: "admin" });

/** Starts a detached `worker start` process (distributed mode); throws when the spawn fails. */
export type WorkerSpawner = (maxTasks: number | null) => Promise<void>;

export interface ServiceContext {
  readonly config: Config;
  readonly db: Store;
  /** The column store opens on first use: most operations never need it. */
  readonly columns: () => Promise<ColumnStore>;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly log: Logger;
  readonly version: string;
  readonly spawnWorker: WorkerSpawner;
  /** Where every job and task transition is published (the in-process worker listens). */
  readonly changes: ChangeFeed;
  /** The change feed as numbered events, for GET /api/v0/events (CONTRACT §10). */
  readonly events: EventHub;
  /** Per-process cache of cacheable read results. */
  readonly results: ResultCache;
  /** Checks entrypoints in a task thread (a module's top-level code never runs on this one). */
  readonly jobs: JobInspector;
  /** Migrations applied while opening the store (a fresh one is migrated to lease an id node); setup reports them. */
  readonly migratedOnOpen?: readonly string[];
}

export interface OperationContext extends ServiceContext {
  readonly principal: Principal;
}
