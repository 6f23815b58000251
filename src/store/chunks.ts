// Statements over many values are split: SQLite binds at most 32,766 variables per statement and
// PostgreSQL 65,535, and a fan-out of 100,000 tasks must not meet either limit.

/** Values per statement: far under both limits, even for rows of two dozen columns. */
export const CHUNK_SIZE = 500;

export function chunksOf<T>(items: readonly T[], size = CHUNK_SIZE): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}
