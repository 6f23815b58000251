// The users table (SPEC "Table users"): lookups by id or username, pages, and the guarded changes
// of role, disabled flag and password. Demoting or disabling an admin never leaves no enabled admin,
// whatever runs at the same time.

import { sql } from "kysely";
import { type Store, isPostgres } from "./db.js";
import { decodeIdCursor, pageOf } from "./paging.js";
import type { UserRow } from "./schema.js";

export interface NewUser {
  id: bigint;
  username: string;
  passwordHash: string;
  role: "admin" | "viewer";
  nowMs: number;
}

/** Inserts a user; false when the username is taken (the unique index decides, so races are safe). */
export async function insertUser(db: Store, u: NewUser): Promise<boolean> {
  const inserted = await db
    .insertInto("users")
    .values({ id: u.id, username: u.username, password_hash: u.passwordHash, role: u.role, disabled: 0, created_at: u.nowMs })
    .onConflict((oc) => oc.column("username").doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Inserts the seed admin only while the users table is empty (SPEC Scheme B rule 2). */
export async function insertFirstUser(db: Store, u: NewUser): Promise<boolean> {
  const { rows } = await sql<{ id: bigint }>`
    INSERT INTO users (id, username, password_hash, role, disabled, created_at)
    SELECT ${u.id}, ${u.username}, ${u.passwordHash}, ${u.role}, ${isPostgres(db) ? sql`false` : sql`0`}, ${u.nowMs}
    WHERE NOT EXISTS (SELECT 1 FROM users)
    ON CONFLICT (username) DO NOTHING
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
 * Changes a user's role or disables them, unless that would leave no enabled admin: returns the
 * updated row, "last_admin", or undefined for no such user. On PostgreSQL the enabled admins' rows
 * are locked first, so of two demotions racing the second sees the first's outcome; on SQLite the
 * transaction begins IMMEDIATE (store/db.ts), which serializes them the same way.
 */
export async function changeUserGuarded(db: Store, id: bigint, change: AdminGuardedChange): Promise<UserRow | "last_admin" | undefined> {
  const set = "role" in change ? { role: change.role } : { disabled: change.disabled ? 1 : 0 };
  const losesAdmin = "role" in change ? change.role !== "admin" : change.disabled;
  return db.transaction().execute(async (tx) => {
    if (isPostgres(tx)) await sql`SELECT id FROM users WHERE role = 'admin' AND disabled = false ORDER BY id FOR UPDATE`.execute(tx);
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
    return tx.updateTable("users").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
  });
}

export async function setPasswordHash(db: Store, id: bigint, passwordHash: string): Promise<boolean> {
  const result = await db.updateTable("users").set({ password_hash: passwordHash }).where("id", "=", id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
