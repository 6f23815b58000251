// Composition root for one process: config → store → column store → ids → the service context.

import { hostname } from "node:os";
import { type Clock, systemClock } from "../core/clock.js";
import type { Config } from "../core/config.js";
import { unavailable } from "../core/errors.js";
import { createIdGenerator } from "../core/ids.js";
import { type ChangeFeed, createLocalChangeFeed, createSharedChangeFeed } from "../engine/changes.js";
import { createEventHub } from "../engine/event-hub.js";
import { createJobInspector } from "../engine/job-inspector.js";
import { type OpenLineageEmitter, startOpenLineage } from "../engine/openlineage/index.js";
import type { ThreadOptions } from "../engine/thread-pool.js";
import { FailureStreak } from "../core/failure-streak.js";
import { createLogger, type Logger } from "../core/log.js";
import { type ColumnStore, openColumnStore } from "../data/client.js";
import type { ServiceContext } from "../operations/index.js";
import { openStore, type Store } from "../store/db.js";
import { migrateToLatest } from "../store/migrate.js";
import { openNotifyChannel } from "../store/notify.js";
import { ResultCache } from "../operations/result-cache.js";
import { leaseNode, releaseNode, renewNode } from "../store/node-leases.js";
import { VERSION } from "./version.js";
import { asStoreRefusal } from "./store-reach.js";
import { detachedWorkerSpawner } from "./worker-spawner.js";

export interface OpenedService extends ServiceContext {
  /** What task threads of this process start with (its id state, the job roots, the heap limit). */
  threadOptions: ThreadOptions;
  /** OpenLineage RunEvents of the transitions this process publishes; null when none is configured. */
  openLineage: OpenLineageEmitter | null;
  /** Releases the node lease, closes the column store and the SQL pool. */
  close(): Promise<void>;
}

export interface OpenServiceOptions {
  clock?: Clock;
  log?: Logger;
  pgSchema?: string;
  /** Long-running processes renew their snowflake node lease; one-shot CLI calls do not. */
  longRunning?: boolean;
  /** A worker process: its SQL connections run only the engine's statements (OpenStoreOptions.engine). */
  engine?: boolean;
  /**
   * Worker and background processes: a statement PostgreSQL leaves unanswered for
   * STATEMENT_DEADLINE_MS closes its connection instead of holding a task or a tick for good. Not
   * the server's, whose migrations and large deletions may rightly take longer.
   */
  boundedStatements?: boolean;
  /**
   * Whether a store with no schema yet is migrated on the way in (to lease an id node). Every
   * process but a distributed deployment's one-shot commands: a readiness probe or a `job list`
   * must not change the deployment's schema (CONTRACT §9: `migrate` and `server start` do).
   */
  migratesEmptyStore?: boolean;
  /**
   * The process that owns the deployment's schema (server start): it creates the ClickHouse
   * database when missing. Others find it or are refused (chDB's is always created).
   */
  createsColumnDatabase?: boolean;
}

/** Far beyond any statement of the engine or the background loop, far below the kernel's 15 minutes. */
export const STATEMENT_DEADLINE_MS = 120_000;

const LEASE_TTL_MS = 10 * 60_000;

/** Retried this soon after a renewal failed, rather than a third of the lease later. */
const LEASE_RETRY_MS = 10_000;

/**
 * Renews this process's snowflake node lease while it runs. A renewal the store did not answer is
 * tried again within seconds, so an outage shorter than the lease keeps it. A lease another
 * process took meanwhile (an outage longer than the lease) means two processes now make ids with
 * the same node: this one exits at once, with a line saying why, for its supervisor to restart it.
 */
export function keepNodeLease(
  db: Store,
  node: number,
  holder: string,
  clock: Clock,
  log: Logger,
  timing: { everyMs: number; retryMs: number; onLost: () => void } = { everyMs: LEASE_TTL_MS / 3, retryMs: LEASE_RETRY_MS, onLost: () => process.exit(EXIT_START_AGAIN) },
): { stop(): void } {
  const failures = new FailureStreak(log, `the renewal of snowflake node ${node}'s lease`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const renewIn = (ms: number) => {
    timer = setTimeout(renew, ms);
    timer.unref();
  };
  const renew = async () => {
    try {
      const kept = await renewNode(db, node, holder, clock.now(), LEASE_TTL_MS);
      failures.succeeded();
      if (!kept) {
        log.error(`snowflake node ${node} is leased by another process now (this one could not renew its lease for ${LEASE_TTL_MS / 60_000} minutes): exiting, so that no two processes make the same ids`);
        return timing.onLost();
      }
      renewIn(timing.everyMs);
    } catch (error) {
      failures.failed(error, `retrying in ${timing.retryMs / 1000} s`);
      renewIn(timing.retryMs);
    }
  };
  renewIn(timing.everyMs);
  return { stop: () => clearTimeout(timer) };
}

/**
 * The exit code of a process that ended for a reason a new start mends (EX_TEMPFAIL): it lost its
 * snowflake node lease, or the worker was declared LOST. Not 0, so a supervisor's restart on
 * failure starts it again.
 */
export const EXIT_START_AGAIN = 75;

export async function openService(config: Config, options: OpenServiceOptions = {}): Promise<OpenedService> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const db = openStore(config.sql, { pgSchema: options.pgSchema, engine: options.engine, statementDeadlineMs: options.boundedStatements ? STATEMENT_DEADLINE_MS : undefined });

  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const { node, migrated } = await leaseNodeOrMigrate(db, holder, clock, options.migratesEmptyStore ?? true).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const renewal = options.longRunning ? keepNodeLease(db, node, holder, clock, log) : undefined;

  let columnStore: Promise<ColumnStore> | undefined;
  // A ClickHouse that does not answer is one line naming it; the next call tries again.
  const columns = () =>
    (columnStore ??= openColumnStore(config.ch, { create: config.ch.engine === "chdb" || options.createsColumnDatabase === true }).catch((error: unknown) => {
      columnStore = undefined;
      throw asStoreRefusal(config, "clickhouse", error);
    }));
  const ids = createIdGenerator(node, clock);
  const threadOptions: ThreadOptions = {
    setup: { ids: ids.shared, jobRoots: config.jobRoots, jobPackages: config.jobPackages },
    memoryMb: config.taskMemoryMb,
  };
  const jobs = createJobInspector(threadOptions, config.moduleLoadTimeoutS * 1000);
  const feed = await openChangeFeed(config, db, log, options.longRunning ?? false);
  const openLineage = config.openLineage
    ? startOpenLineage(config.openLineage, { db, columns, columnTarget: config.ch, clock, log, producer: `https://www.npmjs.com/package/jobhouse/v/${VERSION}` })
    : null;
  const changes = openLineage ? observePublishes(feed, openLineage) : feed;

  return {
    config,
    db,
    columns,
    clock,
    ids,
    jobs,
    threadOptions,
    log,
    version: VERSION,
    migratedOnOpen: migrated,
    spawnWorker: detachedWorkerSpawner(config, log),
    results: new ResultCache(),
    changes,
    openLineage,
    // The raw feed: the changes it polls from other SQLite writers (foreign-changes.ts) are theirs
    // to report, not this process's.
    events: createEventHub(feed, db, {
      logDir: config.logDir,
      pollForeignChanges: config.sql.dialect !== "postgres",
      onError: (error) => log.warn(`event stream: ${(error as Error)?.message ?? error}`),
    }),
    async close() {
      renewal?.stop();
      // Before the stores close: the last events are built from them (bounded: emitter.ts FLUSH_MS).
      await openLineage?.close();
      await changes.close();
      await jobs.close();
      await releaseNode(db, node, holder).catch(() => undefined);
      if (columnStore) await (await columnStore.catch(() => undefined))?.close();
      await db.destroy();
    },
  };
}

/**
 * In-process on SQLite; on PostgreSQL also through NOTIFY, so a run started by the server or the
 * CLI wakes idle workers in other processes at once. Long-running processes listen; one-shot
 * commands only send.
 */
async function openChangeFeed(config: Config, db: Store, log: Logger, listen: boolean): Promise<ChangeFeed> {
  const onError = (error: unknown) => log.warn(`change feed: ${(error as Error)?.message ?? error}`);
  if (config.sql.dialect !== "postgres") return createLocalChangeFeed((error) => log.error(`a change listener failed: ${(error as Error)?.stack ?? error}`));
  const onReconnected = () => log.info("change feed: listening again");
  return createSharedChangeFeed(openNotifyChannel(db, config.sql.location, onError, onReconnected), { listen, onError });
}

/**
 * The feed with every publish also shown to the emitter. Only publishes: on PostgreSQL the feed
 * also delivers other processes' changes to subscribers, and those are their publishers' to report.
 */
function observePublishes(feed: ChangeFeed, emitter: OpenLineageEmitter): ChangeFeed {
  return {
    ...feed,
    publish(change, ready) {
      feed.publish(change, ready);
      emitter.observe(change);
    },
  };
}

/** On a store that was never set up the lease table is missing: migrate once, then lease. */
async function leaseNodeOrMigrate(db: Store, holder: string, clock: Clock, migrates: boolean): Promise<{ node: number; migrated: string[] }> {
  try {
    return { node: await leaseNode(db, holder, clock.now(), LEASE_TTL_MS), migrated: [] };
  } catch (error) {
    // The lease table missing: SQLite's "no such table", PostgreSQL's undefined_table. Not a
    // database or role that does not exist (3D000, 28000), which is a store not reached.
    if (!((error as { code?: unknown }).code === "42P01" || /no such table/i.test(String((error as Error).message)))) throw error;
    if (!migrates) throw unavailable("the SQL store has no jobhouse schema yet: run `jobhouse migrate` (or `jobhouse server start`, which migrates) first", "schema_outdated");
    const migrated = await migrateToLatest(db);
    return { node: await leaseNode(db, holder, clock.now(), LEASE_TTL_MS), migrated };
  }
}
