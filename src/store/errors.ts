// Turns database facts into domain facts (ARCHITECTURE "Errors").

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
