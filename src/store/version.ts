// A cheap fingerprint of the whole orchestration store, for caching read results.
//
// SQLite: `data_version` changes whenever another connection commits, and `total_changes()` counts
// every row this connection changed, so the pair changes whenever anything changed. PostgreSQL has
// no such counter: there the fingerprint is null and nothing is cached.

import { sql } from "kysely";
import { type Store, isPostgres } from "./db.js";

export async function readStoreVersion(db: Store): Promise<string | null> {
  if (isPostgres(db)) return null;
  const { rows } = await sql<{ v: bigint; c: bigint }>`SELECT (SELECT data_version FROM pragma_data_version()) AS v, total_changes() AS c`.execute(db);
  const row = rows[0];
  return row ? `${row.v}:${row.c}` : null;
}
