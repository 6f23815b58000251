// Turns database facts into domain facts (ARCHITECTURE "Errors").

import { isConnectionFailure } from "../core/store-failures.js";

/** True for a UNIQUE or PRIMARY KEY violation on SQLite or PostgreSQL. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/**
 * A deadlock (40P01) or serialization failure (40001) on PostgreSQL, a busy database on SQLite: the
 * database rolled the statement or transaction back, so running it again is safe and right.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001" || code === "SQLITE_BUSY";
}

/**
 * Runs `record` again when the database rolled it back for a conflict (up to `attempts` times, a
 * few milliseconds apart): what a task did must not be recorded as its failure because its
 * completion lost a lock race to another worker's statement.
 */
export async function retryOnConflict<T>(record: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await record();
    } catch (error) {
      if (attempt >= attempts || !isTransientConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * (2 + Math.random() * 8)));
    }
  }
}

/**
 * PostgreSQL cancelled the statement (57014: its statement_timeout, or an administrator's
 * pg_cancel_backend): rolled back, so running it again is safe, as after a dropped connection.
 */
export function isStatementCancelled(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "57014";
}

/** How long an outcome waits for its store to answer again before it is left to lost-worker detection. */
export const OUTAGE_PATIENCE_MS = 30_000;

/**
 * Records an outcome through conflicts (as retryOnConflict) and through a store that stops
 * answering, for up to `patienceMs`: what a task did must not be lost, or recorded as its failure,
 * because a connection dropped. `record` is told whether an earlier try failed with the connection:
 * that try may have committed before its answer was lost.
 */
export async function recordThroughOutage<T>(record: (interrupted: boolean) => Promise<T>, patienceMs = OUTAGE_PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + patienceMs;
  let interrupted = false;
  for (let conflicts = 1, pause = 100; ; ) {
    try {
      return await record(interrupted);
    } catch (error) {
      if (isTransientConflict(error) && conflicts < 5) {
        await new Promise((resolve) => setTimeout(resolve, conflicts++ * (2 + Math.random() * 8)));
        continue;
      }
      if (!(isConnectionFailure(error) || isStatementCancelled(error)) || Date.now() + pause > deadline) throw error;
      interrupted = true;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(2_000, pause * 2);
    }
  }
}
