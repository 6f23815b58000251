// Runs the numbered migrations (the same files on both dialects) through Kysely's Migrator.

import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";
import * as initial from "./migrations/001-initial.js";

const MIGRATIONS: Record<string, Migration> = {
  "001-initial": initial,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema up to date; returns the names applied now (empty when already current). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider, migrationTableName: "schema_migrations", migrationLockTableName: "schema_migrations_lock" });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
