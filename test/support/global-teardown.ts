// Once per test run: the PostgreSQL schemas the suites made are dropped after every test file has
// ended (dropping them while other files run races those files' catalog scans).

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { PG_URL } from "./services.js";

export function setup(): () => Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), "jobhouse-schemas-"));
  const list = join(folder, "schemas.txt");
  // Forked test processes inherit this and append the schemas they are done with.
  process.env.JOBHOUSE_TEST_SCHEMA_LIST = list;
  return async () => {
    const schemas = existsSync(list) ? readFileSync(list, "utf8").split("\n").filter((s) => /^jh_\w+$/.test(s)) : [];
    if (schemas.length > 0) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    }
    rmSync(folder, { recursive: true, force: true });
  };
}
