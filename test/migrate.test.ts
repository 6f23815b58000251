// The migrator on SQLite after a newer build, and on a PostgreSQL database that other deployments share: another schema dropped while
// it scans the catalog fails that scan with "schema … does not exist" (3F000), a failure about
// someone else's schema; the migration is made again. One about its own schema is not retried.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KyselyPlugin, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../src/app/cli.js";
import { type Store, openStore } from "../src/store/db.js";
import { migrateToLatest, pendingMigrations } from "../src/store/migrate.js";
import { insertUser } from "../src/store/users.js";
import { BACKENDS, pgSchemaOf } from "./support/backends.js";

const distributed = BACKENDS.find((b) => b.name === "distributed");

/** Fails the first `times` statements as PostgreSQL would when `schema` vanished mid-scan. */
function droppedSchemaOnce(schema: string, times = 1): KyselyPlugin & { failed: number } {
  return {
    failed: 0,
    transformQuery: (args) => args.node,
    async transformResult(args) {
      if (this.failed < times) {
        this.failed++;
        throw Object.assign(new Error(`schema "${schema}" does not exist`), { code: "3F000" });
      }
      return args.result;
    },
  };
}

/** A rolling upgrade: this build runs on a schema a newer build migrated (SQLite and PostgreSQL). */
async function expectNewerSchemaAccepted(db: Store): Promise<void> {
  await migrateToLatest(db);
  await sql`INSERT INTO schema_migrations (name, timestamp) VALUES ('999-from-a-newer-build', '2026-11-24T00:00:00.000Z')`.execute(db);
  expect(await migrateToLatest(db)).toEqual([]);
  expect(await pendingMigrations(db)).toEqual([]);
  await sql`DELETE FROM schema_migrations WHERE name = '016-reused-from-index'`.execute(db);
  await expect(migrateToLatest(db)).rejects.toThrow("the SQL schema has migrations from a newer build (999-from-a-newer-build) but lacks 016-reused-from-index of this one: migrate it with the newest build");
}

/**
 * Migration 020 on a store that already holds names differing only in case: it does not strand the
 * store (there is no way to delete a user), and every name made after it is checked.
 */
async function expectOldCasePairsKept(db: Store): Promise<void> {
  await migrateToLatest(db);
  // Back to the schema before 020 (the migrations after it undone too, as the migrator runs in order).
  await sql`DROP INDEX users_username_folded`.execute(db);
  await sql`DROP TABLE parked_objects`.execute(db);
  await sql`DELETE FROM schema_migrations WHERE name >= '020'`.execute(db);
  const user = (id: bigint, username: string) => ({ id, username, passwordHash: "x", role: "viewer" as const, nowMs: 1 });
  expect(await insertUser(db, user(10n, "olga"))).toBe(true);
  expect(await insertUser(db, user(11n, "OLGA"))).toBe(true);
  expect(await insertUser(db, user(12n, "Olga"))).toBe(true);
  expect(await migrateToLatest(db)).toEqual(["020-username-case", "021-parked-objects"]);
  expect(await insertUser(db, user(13n, "oLGA"))).toBe(false);
  expect(await insertUser(db, user(14n, "ivan"))).toBe(true);
  expect(await insertUser(db, user(15n, "IVAN"))).toBe(false);
  const names = await db.selectFrom("users").select("username").orderBy("id").execute();
  expect(names.map((r) => r.username)).toEqual(["olga", "OLGA", "Olga", "ivan"]);
}

describe("SQLite", () => {
  const freshSqlite = () => openStore({ dialect: "sqlite", location: join(mkdtempSync(join(tmpdir(), "jobhouse-migrate-")), "store.db") });
  it("runs on a schema a newer build migrated, and says so when this build's own migrations are missing too", async () => {
    const db = freshSqlite();
    try {
      await expectNewerSchemaAccepted(db);
    } finally {
      await db.destroy();
    }
  });

  it("makes usernames unique ignoring case, keeping pairs made before", async () => {
    const db = freshSqlite();
    try {
      await expectOldCasePairsKept(db);
    } finally {
      await db.destroy();
    }
  });
});

describe.runIf(distributed)("migrations on a shared PostgreSQL database", () => {
  const envs: Record<string, string>[] = [];
  const stores: Store[] = [];
  const freshStore = async () => {
    const env = await distributed!.freshEnv();
    envs.push(env);
    const db = openStore({ dialect: "postgres", location: env.SERVICE_SQL_URL! });
    stores.push(db);
    return { db, schema: pgSchemaOf(env.SERVICE_SQL_URL!) };
  };
  afterAll(async () => {
    for (const db of stores) await db.destroy();
    for (const env of envs) await distributed!.dispose(env);
  });

  it("makes the migration again when another deployment's schema was dropped during it", async () => {
    const { db } = await freshStore();
    const plugin = droppedSchemaOnce("jh_someone_else", 2);
    const applied = await migrateToLatest(db.withPlugin(plugin));
    expect(plugin.failed).toBe(2);
    expect(applied).toContain("001-initial");
    expect(await migrateToLatest(db)).toEqual([]);
  });

  // Found by trying the product: an older build's migrate or server start called a schema a newer
  // build had migrated "corrupted migrations", so a rolling upgrade's old server could not restart.
  it("runs on a schema a newer build migrated, and says so when this build's own migrations are missing too", async () => {
    await expectNewerSchemaAccepted((await freshStore()).db);
  });

  it("makes usernames unique ignoring case, keeping pairs made before", async () => {
    await expectOldCasePairsKept((await freshStore()).db);
  });

  // Found by trying the product: `jobhouse ready` (a readiness probe) or `job list` on a fresh
  // database migrated it on the way in, and the documented `migrate` then said "up to date".
  it("a CLI command on a store with no schema yet refuses in one line and leaves it empty; migrate then applies every migration", async () => {
    const { db } = await freshStore();
    const env = envs.at(-1)!;
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, { env: { ...env, SERVICE_AUTH: "token", SERVICE_API_TOKEN: "t0ken-for-a-fresh-store" }, streams: { out: (t) => out.push(t), err: (t) => err.push(t) } });
      return { code, out: out.join("\n"), err: err.join("\n") };
    };
    let unreachedErr = "";
    for (const argv of [["job", "list"], ["ready"]]) {
      const refused = await cli(...argv);
      expect(refused.code, argv.join(" ")).toBe(10);
      expect(refused.err).toBe("error: the SQL store has no jobhouse schema yet: run `jobhouse migrate` (or `jobhouse server start`, which migrates) first (schema_outdated)");
    }
    expect(await pendingMigrations(db)).toContain("001-initial");
    // A database that does not exist is a store not reached, not a schema to make.
    const nowhere = new URL(env.SERVICE_SQL_URL!);
    nowhere.pathname = "/jobhouse_no_such_database";
    const unreached = await runCli(["job", "list"], { env: { ...env, SERVICE_SQL_URL: nowhere.toString() }, streams: { out: () => undefined, err: (t) => void (unreachedErr += t) } });
    expect(unreached).toBe(10);
    expect(unreachedErr).toMatch(/^error: PostgreSQL at \S+ cannot be reached: database "jobhouse_no_such_database" does not exist \(sql_unreachable\)/);
    const migrated = await cli("migrate");
    expect(migrated.code, migrated.err).toBe(0);
    expect(migrated.out).toMatch(/^Applied 001-initial, /);
  });

  it("does not retry when its own schema is the one missing", async () => {
    const { db, schema } = await freshStore();
    const plugin = droppedSchemaOnce(schema, 1);
    await expect(migrateToLatest(db.withPlugin(plugin))).rejects.toThrow(`schema "${schema}" does not exist`);
  });
});
