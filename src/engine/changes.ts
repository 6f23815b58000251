// The change feed: every job and task transition is published here once, by the code whose guarded
// update committed it, and every consumer (a worker waiting for work, later the event stream and
// PostgreSQL NOTIFY across processes) subscribes instead of re-deriving what changed.

export type Change =
  | { type: "job"; id: bigint; status: string; name?: string }
  | { type: "task"; id: bigint; jobId: bigint; status: string; attempt: number };

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
  };
}
