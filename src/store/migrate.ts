// Runs the numbered migrations (the same files on both dialects) through Kysely's Migrator.

import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";
import { currentPgSchema, isPostgres } from "./db.js";
import * as initial from "./migrations/001-initial.js";
import * as dataLineage from "./migrations/002-data-lineage.js";
import * as authChains from "./migrations/003-auth-chains.js";
import * as objectNameLocks from "./migrations/004-object-name-locks.js";
import * as jobCodeVersion from "./migrations/005-job-code-version.js";
import * as registeredKwargsSchema from "./migrations/006-registered-kwargs-schema.js";
import * as runIdempotencyKeys from "./migrations/007-run-idempotency-keys.js";
import * as failureNotifications from "./migrations/008-failure-notifications.js";
import * as reruns from "./migrations/009-reruns.js";
import * as runLimits from "./migrations/010-run-limits.js";
import * as lineageSources from "./migrations/011-lineage-sources.js";
import * as scaleIndexes from "./migrations/012-scale-indexes.js";
import * as objectStats from "./migrations/013-object-stats.js";
import * as dependencyStatistics from "./migrations/014-dependency-statistics.js";
import * as jobCounts from "./migrations/015-job-counts.js";
import * as reusedFromIndex from "./migrations/016-reused-from-index.js";
import * as taskAttempts from "./migrations/017-task-attempts.js";
import * as deletedJobs from "./migrations/018-deleted-jobs.js";
import * as attemptWorkers from "./migrations/019-attempt-workers.js";
import * as usernameCase from "./migrations/020-username-case.js";
import * as parkedObjects from "./migrations/021-parked-objects.js";

const MIGRATIONS: Record<string, Migration> = {
  "001-initial": initial,
  "002-data-lineage": dataLineage,
  "003-auth-chains": authChains,
  "004-object-name-locks": objectNameLocks,
  "005-job-code-version": jobCodeVersion,
  "006-registered-kwargs-schema": registeredKwargsSchema,
  "007-run-idempotency-keys": runIdempotencyKeys,
  "008-failure-notifications": failureNotifications,
  "009-reruns": reruns,
  "010-run-limits": runLimits,
  "011-lineage-sources": lineageSources,
  "012-scale-indexes": scaleIndexes,
  "013-object-stats": objectStats,
  "014-dependency-statistics": dependencyStatistics,
  "015-job-counts": jobCounts,
  "016-reused-from-index": reusedFromIndex,
  "017-task-attempts": taskAttempts,
  "018-deleted-jobs": deletedJobs,
  "019-attempt-workers": attemptWorkers,
  "020-username-case": usernameCase,
  "021-parked-objects": parkedObjects,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema up to date; returns the names applied now (empty when already current). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return whileOtherSchemasDrop(db, () => migrateOnce(db));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function migrateOnce(db: Kysely<any>): Promise<string[]> {
  // A newer build migrated this schema (a rolling upgrade, or a rollback): migrations only add, so
  // this build runs on it as it is. Kysely's migrator would call that "corrupted migrations".
  const newer = await unknownMigrations(db);
  if (newer.length > 0) {
    const pending = await pendingMigrations(db);
    if (pending.length === 0) return [];
    throw new Error(`the SQL schema has migrations from a newer build (${newer.join(", ")}) but lacks ${pending.join(", ")} of this one: migrate it with the newest build`);
  }
  const { error, results } = await (await migratorFor(db)).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** The one migrator configuration, for migrating and for asking what is pending. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function migratorFor(db: Kysely<any>): Promise<Migrator> {
  // Kysely looks for its tables in every schema unless told which: name the current one, so
  // several deployments (or test runs) can share one PostgreSQL database.
  const schema = isPostgres(db) ? await currentPgSchema(db) : undefined;
  return new Migrator({
    db,
    provider,
    migrationTableName: "schema_migrations",
    migrationLockTableName: "schema_migrations_lock",
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/** Migrations the schema has had that this build does not know (a newer build applied them). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function unknownMigrations(db: Kysely<any>): Promise<string[]> {
  let rows: { name: string }[];
  try {
    rows = await db.selectFrom("schema_migrations").select("name").execute();
  } catch (error) {
    // An empty database has no migration table yet (42P01 on PostgreSQL).
    if ((error as { code?: string }).code === "42P01" || /no such table/.test((error as Error).message)) return [];
    throw error;
  }
  return rows.map((row) => row.name).filter((name) => !(name in MIGRATIONS));
}

/** Migrations this build knows that the schema has not had (all of them on an empty database). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  return whileOtherSchemasDrop(db, async () => {
    const all = await (await migratorFor(db)).getMigrations();
    return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
  });
}

/**
 * Kysely's migrator looks for its table with a scan of the whole catalog, which fails with "schema
 * … does not exist" (3F000) when another deployment sharing the database drops its schema during
 * the scan. That failure is about someone else's schema: the attempt (one transaction, rolled
 * back) is made again, a few times.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function whileOtherSchemasDrop<T>(db: Kysely<any>, attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (tries >= 5 || e?.code !== "3F000" || !isPostgres(db)) throw error;
      const ours = await currentPgSchema(db).catch(() => undefined);
      if (ours !== undefined && e.message?.includes(`"${ours}"`)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * tries));
    }
  }
}
