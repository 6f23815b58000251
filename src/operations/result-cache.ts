// Results of read operations that depend only on their input and the orchestration store, kept
// while the store's version is unchanged. The web app polls every list every 2 s from every open
// tab; an unchanged store answers those from memory.

import { readStoreVersion } from "../store/version.js";
import type { Store } from "../store/db.js";

export class ResultCache {
  private readonly entries = new Map<string, { version: string; output: unknown }>();
  /** Outputs this cache has kept: a surface may serialize one of them once for all its readers. */
  private readonly kept = new WeakSet<object>();

  /** `capacity` 0 computes every time (benchmarks measure the uncached path that way). */
  constructor(private readonly capacity = 256) {}

  /** Returns the cached output for `keyOf()`, or computes, stores and returns it. */
  async through<T>(db: Store, keyOf: () => string, compute: () => Promise<T>): Promise<T> {
    // Without a cache (capacity 0) neither the version nor the key is worked out.
    if (this.capacity === 0) return compute();
    const key = keyOf();
    const version = await readStoreVersion(db);
    if (version === null) return compute();
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      // Refresh recency: Map iteration order is insertion order, so re-insert.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.output as T;
    }
    const output = await compute();
    // Computed after reading the version: a write in between makes the next read miss, never stale.
    this.entries.delete(key);
    this.entries.set(key, { version, output });
    if (typeof output === "object" && output !== null) this.kept.add(output);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return output;
  }

  /** Whether `output` is one this cache kept (and may return again, the same object). */
  keeps(output: object): boolean {
    return this.kept.has(output);
  }
}

/** A stable key for a parsed input (bigints included). */
export const cacheKey = (name: string, input: unknown): string =>
  name + ":" + JSON.stringify(input, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
