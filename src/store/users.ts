// The users table (SPEC "Table users"): lookups by id or username, pages, and the guarded changes
// of role, disabled flag and password. Demoting or disabling an admin never leaves no enabled admin,
// whatever runs at the same time.

import { sql } from "kysely";
import { type Store, isPostgres } from "./db.js";
import { decodeIdCursor, pageOf } from "./paging.js";
import type { UserRow } from "./schema.js";
import { revokeUserTokens } from "./refresh-tokens.js";

export interface NewUser {
  id: bigint;
  username: string;
  passwordHash: string;
  role: "admin" | "viewer";
  nowMs: number;
}

/**
 * Inserts a user; false when the username is taken, in any letter case (the unique indexes decide,
 * so races are safe: migration 020 folds the case).
 */
export async function insertUser(db: Store, u: NewUser): Promise<boolean> {
  const inserted = await db
    .insertInto("users")
    .values({ id: u.id, username: u.username, password_hash: u.passwordHash, role: u.role, disabled: 0, created_at: u.nowMs })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Inserts the seed admin only while the users table is empty (SPEC Scheme B rule 2). */
export async function insertFirstUser(db: Store, u: NewUser): Promise<boolean> {
  const { rows } = await sql<{ id: bigint }>`
    INSERT INTO users (id, username, password_hash, role, disabled, created_at)
    SELECT ${u.id}, ${u.username}, ${u.passwordHash}, ${u.role}, ${isPostgres(db) ? sql`false` : sql`0`}, ${u.nowMs}
    WHERE NOT EXISTS (SELECT 1 FROM users)
    ON CONFLICT DO NOTHING
    RETURNING id`.execute(db);
  return rows.length > 0;
}

export async function countUsers(db: Store): Promise<number> {
  const row = await db.selectFrom("users").select((eb) => eb.fn.countAll().as("count")).executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function findUserByName(db: Store, username: string): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst();
}

/** The user whose name is `username` in some letter case: names are unique that way (migration 020). */
export async function findUserByNameInAnyCase(db: Store, username: string): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where(sql<string>`lower(username)`, "=", username.toLowerCase()).executeTakeFirst();
}

export async function findUserById(db: Store, id: bigint): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A page of users by id (creation order), with how many there are in all. */
export async function listUsers(db: Store, limit: number, cursor?: string): Promise<{ rows: UserRow[]; total: number; nextCursor: string | null }> {
  let query = db.selectFrom("users").selectAll().orderBy("id").limit(limit + 1);
  if (cursor) query = query.where("id", ">", decodeIdCursor(cursor));
  const page = pageOf(await query.execute(), limit, (u) => u.id.toString());
  return { ...page, total: await countUsers(db) };
}

export type AdminGuardedChange = { role: "admin" | "viewer" } | { disabled: boolean };

/**
 * Takes the locks a change of users needs, in one order for all: every enabled admin's row and the
 * rows of `targets`, by id (PostgreSQL; on SQLite the transaction begins IMMEDIATE, store/db.ts,
 * which serializes it with every other). Two changes racing then run one after the other and see
 * each other's outcome, and a refresh of a target's token (which locks its user's row before the
 * tokens, see lockUser) either commits before the change revokes tokens or waits for it: never a
 * deadlock, never a token issued behind a revocation's back. Whether `actorId` is an enabled admin
 * now (an access token's role claim is trusted until it expires, but a demoted or disabled admin
 * must not use its last minutes to undo that); null, no user acts (the CLI, Scheme A).
 */
async function lockForUserChange(tx: Store, targets: bigint[], actorId: bigint | null): Promise<boolean> {
  if (isPostgres(tx)) {
    const ids = targets.length > 0 ? sql`OR id IN (${sql.join(targets)})` : sql``;
    await sql`SELECT id FROM users WHERE (role = 'admin' AND disabled = false) ${ids} ORDER BY id FOR UPDATE`.execute(tx);
  }
  if (actorId === null) return true;
  const actor = await tx.selectFrom("users").select(["role", "disabled"]).where("id", "=", actorId).executeTakeFirst();
  return actor !== undefined && actor.role === "admin" && !actor.disabled;
}

/** Refused because the acting admin is one no longer (see lockForUserChange). */
export const NOT_ADMIN = "not_admin" as const;

/**
 * Changes a user's role or disables them, unless that would leave no enabled admin: returns the
 * updated row, "last_admin", NOT_ADMIN, or undefined for no such user. Disabling revokes the user's
 * refresh tokens in the same transaction (`revokeTokensAtMs`).
 */
export async function changeUserGuarded(
  db: Store,
  id: bigint,
  change: AdminGuardedChange,
  guard: { actorId: bigint | null; revokeTokensAtMs?: number },
): Promise<UserRow | "last_admin" | typeof NOT_ADMIN | undefined> {
  const set = "role" in change ? { role: change.role } : { disabled: change.disabled ? 1 : 0 };
  const losesAdmin = "role" in change ? change.role !== "admin" : change.disabled;
  return db.transaction().execute(async (tx) => {
    if (!(await lockForUserChange(tx, [id], guard.actorId))) return NOT_ADMIN;
    const target = await tx.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
    if (!target) return undefined;
    if (losesAdmin && target.role === "admin" && !target.disabled) {
      const others = await tx
        .selectFrom("users")
        .select((eb) => eb.fn.countAll().as("count"))
        .where("role", "=", "admin")
        .where(isPostgres(tx) ? sql<boolean>`disabled = false` : sql<boolean>`disabled = 0`)
        .where("id", "<>", id)
        .executeTakeFirst();
      if (Number(others?.count ?? 0) === 0) return "last_admin";
    }
    const updated = await tx.updateTable("users").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
    if (guard.revokeTokensAtMs !== undefined) await revokeUserTokens(tx, id, guard.revokeTokensAtMs);
    return updated;
  });
}

/**
 * Sets a user's password and revokes their refresh tokens, in one transaction: false for no such
 * user. The user's failed logins go too: ten wrong guesses by anyone lock a name for 15 minutes,
 * and an admin's new password is the way to let its owner in again at once.
 */
export async function setPasswordGuarded(db: Store, id: bigint, passwordHash: string, actorId: bigint | null, nowMs: number): Promise<boolean | typeof NOT_ADMIN> {
  return db.transaction().execute(async (tx) => {
    if (!(await lockForUserChange(tx, [id], actorId))) return NOT_ADMIN;
    const updated = await tx.updateTable("users").set({ password_hash: passwordHash }).where("id", "=", id).returning("username").executeTakeFirst();
    if (updated === undefined) return false;
    await revokeUserTokens(tx, id, nowMs);
    await tx.deleteFrom("login_failures").where("username", "=", updated.username).execute();
    return true;
  });
}

/** insertUser by an admin who must still be one (see lockForUserChange). */
export async function insertUserGuarded(db: Store, u: NewUser, actorId: bigint | null): Promise<boolean | typeof NOT_ADMIN> {
  return db.transaction().execute(async (tx) => ((await lockForUserChange(tx, [], actorId)) ? insertUser(tx, u) : NOT_ADMIN));
}

/**
 * A user's row, locked until the transaction ends (PostgreSQL; SQLite's transaction holds the whole
 * store). A refresh and a logout take it before touching the user's tokens, as every change of
 * users does (lockForUserChange), so a revocation never misses a token a refresh is issuing.
 */
export async function lockUser(tx: Store, id: bigint): Promise<UserRow | undefined> {
  const query = tx.selectFrom("users").selectAll().where("id", "=", id);
  return (isPostgres(tx) ? query.forUpdate() : query).executeTakeFirst();
}
