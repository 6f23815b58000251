// The migrator on a PostgreSQL database that other deployments share: another schema dropped while
// it scans the catalog fails that scan with "schema … does not exist" (3F000), a failure about
// someone else's schema; the migration is made again. One about its own schema is not retried.

import type { KyselyPlugin } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { type Store, openStore } from "../src/store/db.js";
import { migrateToLatest } from "../src/store/migrate.js";
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

  it("does not retry when its own schema is the one missing", async () => {
    const { db, schema } = await freshStore();
    const plugin = droppedSchemaOnce(schema, 1);
    await expect(migrateToLatest(db.withPlugin(plugin))).rejects.toThrow(`schema "${schema}" does not exist`);
  });
});
