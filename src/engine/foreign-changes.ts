// Job changes made by another process on a SQLite store (CONTRACT §10: "SQLite read by another
// process is polled every 2 s and diffed"). In local mode the CLI writes the store directly (a run,
// a cancel) while the server's feed hears only its own process; this reads the jobs that are open or
// new every 2 s, compares each status with the last one known, and publishes the differences on
// the server's feed. PostgreSQL needs none of it: every process NOTIFYs.

import { type Store } from "../store/db.js";
import { OPEN_JOB_STATUSES } from "../core/statuses.js";
import type { ChangeFeed } from "./changes.js";

export const FOREIGN_POLL_MS = 2_000;
/** Statuses remembered for at most this many jobs (the oldest are forgotten first). */
const KNOWN_LIMIT = 50_000;
const LOOKUP_CHUNK = 500;
const isOpen = (status: string) => (OPEN_JOB_STATUSES as readonly string[]).includes(status);

export interface ForeignChangePoller {
  /** One comparison now (the timer calls it; a test may too). */
  poll(): Promise<void>;
  stop(): void;
}

/** `active()` says whether anyone listens: with no stream client the store is not read. */
export function pollForeignJobChanges(
  db: Store,
  changes: ChangeFeed,
  options: { active: () => boolean; onError: (error: unknown) => void; intervalMs?: number },
): ForeignChangePoller {
  const known = new Map<bigint, string>();
  /** Jobs last known open, from the feed or a look: the ones another process may end. */
  const open = new Set<bigint>();
  const remember = (id: bigint, status: string) => {
    known.delete(id);
    if (known.size >= KNOWN_LIMIT) known.delete(known.keys().next().value!);
    known.set(id, status);
    if (isOpen(status)) open.add(id);
    else open.delete(id);
  };
  // What this process publishes itself is known already; only the rest is news.
  const unsubscribe = changes.subscribe(({ change }) => change.type === "job" && remember(change.id, change.status));
  let highestId: bigint | undefined;
  let running = false;

  const publishIfNew = (row: { id: bigint; name: string; status: string }) => {
    if (known.get(row.id) === row.status) return;
    remember(row.id, row.status);
    // A new PENDING job is work for this process's worker too.
    changes.publish({ type: "job", id: row.id, name: row.name, status: row.status }, row.status === "PENDING");
  };

  async function poll(): Promise<void> {
    if (running) return;
    running = true;
    try {
      // The first look starts from the newest job: older ones are news only if they are open.
      highestId ??= (await db.selectFrom("jobs").select("id").orderBy("id", "desc").limit(1).executeTakeFirst())?.id ?? 0n;
      const after = highestId;
      const current = await db
        .selectFrom("jobs")
        .select(["id", "name", "status"])
        .where((eb) => eb.or([eb("status", "in", [...OPEN_JOB_STATUSES]), eb("id", ">", after)]))
        .execute();
      const seen = new Set(current.map((row) => row.id));
      // Jobs known open and not open now: they ended (or were deleted).
      const ended = [...open].filter((id) => !seen.has(id));
      for (let i = 0; i < ended.length; i += LOOKUP_CHUNK) {
        const rows = await db.selectFrom("jobs").select(["id", "name", "status"]).where("id", "in", ended.slice(i, i + LOOKUP_CHUNK)).execute();
        rows.forEach(publishIfNew);
        // Deleted meanwhile: nothing to say, and nothing to watch.
        for (const id of ended.slice(i, i + LOOKUP_CHUNK)) if (!rows.some((row) => row.id === id)) open.delete(id);
      }
      current.sort((a, b) => (a.id < b.id ? -1 : 1)).forEach(publishIfNew);
      for (const row of current) if (row.id > highestId) highestId = row.id;
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => {
    if (options.active()) poll().catch(options.onError);
    // Idle, the next active look starts from the newest job: new jobs meanwhile reached nobody anyway.
    else highestId = undefined;
  }, options.intervalMs ?? FOREIGN_POLL_MS);
  timer.unref();
  return {
    poll,
    stop() {
      clearInterval(timer);
      unsubscribe();
    },
  };
}
