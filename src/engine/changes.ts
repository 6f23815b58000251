// The change feed: every job and task transition is published here once, by the code whose guarded
// update committed it, and every consumer (a worker waiting for work, later the event stream) 
// subscribes instead of re-deriving what changed. Within one process the feed is an emitter; in
// distributed mode a transport (PostgreSQL NOTIFY) carries each change to the other processes too.

export type Change =
  | { type: "job"; id: bigint; status: string; name?: string }
  | { type: "task"; id: bigint; jobId: bigint; status: string; attempt: number }
  /** The link to other processes was down: anything may have changed, refetch what you show. */
  | { type: "resync" };

/** A job or task transition (everything but a resync). */
export type Transition = Exclude<Change, { type: "resync" }>;

export interface Published {
  change: Change;
  /** Some task may now be claimed (a job was created, a task finished or returned to PENDING). */
  ready: boolean;
}

export type ChangeListener = (published: Published) => void;

export interface ChangeFeed {
  publish(change: Change, ready?: boolean): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void;
  /** Starts hearing other processes' changes, for a process opened without (a one-shot command that waits). */
  listen(): Promise<void>;
  /** Sends what is still buffered and stops listening. */
  close(): Promise<void>;
}

/** Within one process: listeners are called at once, in order; one that throws harms no other. */
export function createLocalChangeFeed(onListenerError: (error: unknown) => void = () => undefined): ChangeFeed {
  const listeners = new Set<ChangeListener>();
  return {
    publish(change, ready = false) {
      for (const listener of listeners) {
        try {
          listener({ change, ready });
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    // One process: every change is already heard.
    listen: async () => undefined,
    close: async () => undefined,
  };
}

/** How changes reach other processes (PostgreSQL NOTIFY in store/notify.ts). */
export interface ChangeTransport {
  /** Payloads larger than this are split. */
  readonly maxPayloadBytes: number;
  send(payload: string): Promise<void>;
  /** `onResync` runs after the link was down and is up again: messages may have been missed. */
  listen(onPayload: (payload: string) => void, onResync: () => void): Promise<void>;
  close(): Promise<void>;
}

export interface SharedFeedOptions {
  /** Receive other processes' changes (servers and workers); a one-shot command only sends. */
  listen: boolean;
  onError: (error: unknown) => void;
}

/**
 * Messages to other processes leave at most this often: the first change after a quiet spell goes
 * at once, later ones wait for the next slot and leave together. A busy worker then sends tens of
 * NOTIFYs a second instead of one per transition, and a waiting process hears within this bound.
 */
const SEND_INTERVAL_MS = 20;

/**
 * Local delivery at once, plus the transport for other processes, batched (see SEND_INTERVAL_MS);
 * a process ignores its own messages, which its listeners already had.
 */
export async function createSharedChangeFeed(transport: ChangeTransport, options: SharedFeedOptions): Promise<ChangeFeed> {
  // Delivery within this process is the local feed's; this adds the way out and the way in.
  const local = createLocalChangeFeed(options.onError);
  const origin = Math.random().toString(36).slice(2, 10);
  const ownPrefix = `{"o":"${origin}"`;
  let outbox: string[] = [];
  let flushing: Promise<void> = Promise.resolve();
  /** Set while a flush is scheduled: cancels it. */
  let cancelFlush: (() => void) | undefined;
  let lastFlushAt = 0;

  const flush = () => {
    cancelFlush = undefined;
    lastFlushAt = Date.now();
    const batch = outbox;
    outbox = [];
    // Sends stay in order; a failed send loses only the promptness (workers still poll).
    flushing = flushing.then(async () => {
      for (const payload of packPayloads(origin, batch, transport.maxPayloadBytes)) await transport.send(payload).catch(options.onError);
    });
  };

  let listening: Promise<void> | undefined;
  const listen = () =>
    (listening ??= transport.listen(
      (payload) => {
        if (payload.startsWith(ownPrefix)) return;
        for (const { change, ready } of decodePayload(payload)?.changes ?? []) local.publish(change, ready);
      },
      () => local.publish({ type: "resync" }, true),
    ));
  if (options.listen) await listen();

  return {
    publish(change, ready = false) {
      local.publish(change, ready);
      if (change.type === "resync") return;
      outbox.push(encodeChange(change, ready));
      if (cancelFlush === undefined) {
        const wait = lastFlushAt + SEND_INTERVAL_MS - Date.now();
        if (wait <= 0) {
          const immediate = setImmediate(flush);
          cancelFlush = () => clearImmediate(immediate);
        } else {
          const timer = setTimeout(flush, wait);
          cancelFlush = () => clearTimeout(timer);
        }
      }
    },
    subscribe: local.subscribe,
    listen,
    async close() {
      // What is waiting for its slot leaves now; nothing is sent after the transport closed.
      if (cancelFlush !== undefined) {
        cancelFlush();
        flush();
      }
      await flushing;
      await transport.close();
    },
  };
}

// Wire form, kept small (NOTIFY payloads are limited to 8,000 bytes): {"o":origin,"c":[…]} with
// each change an array: ["j", id, status, ready, name?] or ["t", id, jobId, status, attempt, ready].

function encodeChange(change: Transition, ready: boolean): string {
  const r = ready ? 1 : 0;
  return change.type === "job"
    ? JSON.stringify(change.name ? ["j", String(change.id), change.status, r, change.name] : ["j", String(change.id), change.status, r])
    : JSON.stringify(["t", String(change.id), String(change.jobId), change.status, change.attempt, r]);
}

function* packPayloads(origin: string, encoded: string[], maxBytes: number): Generator<string> {
  const head = `{"o":"${origin}","c":[`;
  let parts: string[] = [];
  let size = head.length + 2;
  for (const item of encoded) {
    if (parts.length > 0 && size + item.length + 1 > maxBytes) {
      yield `${head}${parts.join(",")}]}`;
      parts = [];
      size = head.length + 2;
    }
    parts.push(item);
    size += item.length + 1;
  }
  if (parts.length > 0) yield `${head}${parts.join(",")}]}`;
}

/** Undefined for a payload this build cannot read (another version's, or garbage). */
export function decodePayload(payload: string): { origin: string; changes: Published[] } | undefined {
  try {
    const message = JSON.parse(payload) as { o: string; c: unknown[][] };
    const changes = message.c.map((c): Published => {
      if (c[0] === "j") {
        const name = typeof c[4] === "string" ? { name: c[4] } : {};
        return { change: { type: "job", id: BigInt(c[1] as string), status: String(c[2]), ...name }, ready: c[3] === 1 };
      }
      if (c[0] === "t") {
        return { change: { type: "task", id: BigInt(c[1] as string), jobId: BigInt(c[2] as string), status: String(c[3]), attempt: Number(c[4]) }, ready: c[5] === 1 };
      }
      throw new Error("unknown change");
    });
    return { origin: String(message.o), changes };
  } catch {
    return undefined;
  }
}
