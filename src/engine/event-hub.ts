// The event stream's source (CONTRACT §10): turns the change feed into numbered events, holds the
// most recent ones so a client that reconnects with Last-Event-ID gets what it missed, and hands
// them to subscribers in batches, serialized once however many connections read them.

import type { Store } from "../store/db.js";
import { findJobById } from "../store/jobs.js";
import type { ChangeFeed, Change } from "./changes.js";
import { pollForeignJobChanges } from "./foreign-changes.js";
import { type LogFollower, followTaskLog } from "./log-follower.js";

export type HubEventType = "job.updated" | "task.updated" | "resync";

export interface HubEvent {
  type: HubEventType;
  /** `<epoch>-<seq>`: the epoch tells a reconnecting client whether this process numbered it. */
  id: string;
  seq: number;
  /** The job the event concerns (undefined for a resync, which concerns everything). */
  jobId?: bigint;
  taskId?: bigint;
  /** A task event's attempt number. */
  attempt?: number;
  /** The event as it goes on the wire: id, event and data lines and the blank line. */
  frame: string;
}

/** What subscribers receive: a few events at once, and all their frames joined. */
export interface HubBatch {
  events: readonly HubEvent[];
  text: string;
}

export interface EventHub {
  /** Returns the unsubscribe function. */
  subscribe(listener: (batch: HubBatch) => void): () => void;
  /**
   * The events after `lastEventId` still held, oldest first; undefined when the id is not one of
   * this process's or is older than what is held (the client must refetch everything).
   */
  since(lastEventId: string): HubEvent[] | undefined;
  /** The id of the newest event, for a client that starts now, and its number. */
  readonly lastId: string;
  readonly lastSeq: number;
  /** Follows a task's log (`task.log` events); undefined when the task does not exist. */
  followTaskLog(taskId: bigint): Promise<LogFollower | undefined>;
}

export interface EventHubOptions {
  /** Where attempt logs are written when a task row does not name its file. */
  logDir: string;
  /**
   * SQLite: other processes (the CLI) write the store without telling this one; while anyone
   * listens, look for their job changes every 2 s (engine/foreign-changes.ts).
   */
  pollForeignChanges?: boolean;
  /** Events kept for reconnecting clients. */
  retained?: number;
  /**
   * Batches leave at most this often (the first after a quiet spell goes at once), and less often
   * with many subscribers: see batchInterval.
   */
  batchIntervalMs?: number;
  onError?: (error: unknown) => void;
}

const DEFAULT_RETAINED = 2_000;
const DEFAULT_BATCH_INTERVAL_MS = 20;
/**
 * Each batch costs one socket write per subscriber. Past 40 of them the interval grows by 0.5 ms
 * per subscriber (200 clients: a batch every 100 ms, 2,000 writes a second however busy the
 * engine is), which keeps a crowd of dashboards from taking the engine's CPU; capped at 100 ms.
 */
const batchInterval = (baseMs: number, subscribers: number) => Math.min(100, Math.max(baseMs, subscribers * 0.5));
/** Job names never change: a bounded map of the recent ones saves a lookup per job event. */
const NAMES_KEPT = 10_000;

const sseFrame = (id: string, type: string, data: unknown) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** Subscribes to the change feed at the first subscriber, and stays subscribed (numbering never pauses). */
export function createEventHub(changes: ChangeFeed, db: Store, options: EventHubOptions): EventHub {
  const retained = options.retained ?? DEFAULT_RETAINED;
  const intervalMs = options.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
  const epoch = Date.now().toString(36);
  const listeners = new Set<(batch: HubBatch) => void>();
  const names = new Map<bigint, string>();
  const held: HubEvent[] = [];
  let seq = 0;
  let started = false;
  let outbox: HubEvent[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let lastFlushAt = 0;
  // Changes wait here, in order, while a job's name is being looked up (drained while not empty).
  const waiting: Change[] = [];

  const rememberName = (id: bigint, name: string) => {
    if (names.size >= NAMES_KEPT) names.delete(names.keys().next().value!);
    names.set(id, name);
  };

  const flush = () => {
    flushTimer = undefined;
    lastFlushAt = Date.now();
    const batch = { events: outbox, text: outbox.map((e) => e.frame).join("") };
    outbox = [];
    for (const listener of listeners) {
      try {
        listener(batch);
      } catch (error) {
        options.onError?.(error);
      }
    }
  };

  const emit = (type: HubEventType, data: unknown, jobId?: bigint, taskId?: bigint, attempt?: number) => {
    seq += 1;
    const id = `${epoch}-${seq}`;
    const event: HubEvent = { type, id, seq, jobId, taskId, attempt, frame: sseFrame(id, type, data) };
    held.push(event);
    // Trimmed in steps, not at every event: at least `retained` are always held.
    if (held.length >= retained * 2) held.splice(0, held.length - retained);
    outbox.push(event);
    if (flushTimer === undefined) flushTimer = setTimeout(flush, Math.max(0, lastFlushAt + batchInterval(intervalMs, listeners.size) - Date.now()));
  };

  const emitChange = (change: Change) => {
    if (change.type === "resync") emit("resync", { reason: "the link to other processes was re-established: changes may have been missed" });
    else if (change.type === "job") emit("job.updated", { id: String(change.id), name: change.name ?? names.get(change.id) ?? "", status: change.status }, change.id);
    else emit("task.updated", { id: String(change.id), job_id: String(change.jobId), status: change.status, attempt: change.attempt }, change.jobId, change.id, change.attempt);
  };

  // A job change without its name waits for a lookup, and every change after it waits too (order).
  const drain = async () => {
    while (waiting.length > 0) {
      const change = waiting[0]!;
      if (change.type === "job" && !change.name && !names.has(change.id)) {
        const name = await findJobById(db, change.id).then(
          (job) => job?.name,
          (error: unknown) => void options.onError?.(error),
        );
        if (name !== undefined) rememberName(change.id, name);
      }
      waiting.shift();
      emitChange(change);
    }
  };

  const onChange = (change: Change) => {
    if (change.type === "job" && change.name) rememberName(change.id, change.name);
    const needsLookup = change.type === "job" && !change.name && !names.has(change.id);
    if (waiting.length === 0 && !needsLookup) return emitChange(change);
    waiting.push(change);
    // The first to wait starts the drain; later ones join its queue.
    if (waiting.length === 1) void drain();
  };

  return {
    subscribe(listener) {
      if (!started) {
        started = true;
        changes.subscribe(({ change }) => onChange(change));
        if (options.pollForeignChanges) pollForeignJobChanges(db, changes, { active: () => listeners.size > 0, onError: options.onError ?? (() => undefined) });
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    since(lastEventId) {
      const match = /^([0-9a-z]+)-(\d+)$/.exec(lastEventId);
      if (!match || match[1] !== epoch) return undefined;
      const after = Number(match[2]);
      if (after > seq) return undefined;
      // Everything after `after` must still be held, or some of it was lost.
      const oldest = held[0]?.seq ?? seq + 1;
      if (after + 1 < oldest) return undefined;
      return held.filter((e) => e.seq > after);
    },
    get lastId() {
      return `${epoch}-${seq}`;
    },
    get lastSeq() {
      return seq;
    },
    followTaskLog: (taskId) => followTaskLog(db, options.logDir, taskId),
  };
}
