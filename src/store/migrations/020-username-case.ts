// 020: usernames are unique ignoring letter case. `OLGA` and `olga` could both be created: two
// accounts an admin reading a list or an audit line could not tell apart. A unique index on the
// folded name decides, so two creations racing are safe as with the name itself. Usernames are
// ASCII (models/auth.ts), which lower() folds alike on both databases.
//
// A store may already hold such a pair. There is no way to delete a user, so refusing to migrate
// would strand it: the oldest of each pair is indexed and the others are left out of the index
// (they keep working, and an admin can disable them), while every new name is checked.

import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ id: bigint | number | string }>`
    SELECT id FROM users u
    WHERE EXISTS (SELECT 1 FROM users older WHERE lower(older.username) = lower(u.username) AND older.id < u.id)`.execute(db);
  const exempt = rows.map((r) => BigInt(r.id).toString());
  const only = exempt.length > 0 ? sql` WHERE id NOT IN (${sql.raw(exempt.join(", "))})` : sql``;
  await sql`CREATE UNIQUE INDEX users_username_folded ON users (lower(username))${only}`.execute(db);
}
