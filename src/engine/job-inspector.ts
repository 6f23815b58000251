// Loading an entrypoint to check it (register_job, run_job) happens in a task thread, never on the
// thread that serves requests: a module that spins, exits or throws at import fails the request,
// not the server. A thread whose module was refused is replaced, so a refusal leaves no module
// state behind.

import { ServiceError, invalid } from "../core/errors.js";
import { ThreadPool, type ThreadOptions } from "./thread-pool.js";
import { MODULE_CHANGED } from "./loader.js";
import { type InspectedJob, fromErrorData } from "./thread-protocol.js";

export type { InspectedJob } from "./thread-protocol.js";

export interface JobInspector {
  /** The job behind an entrypoint (name and options), and kwargs checked against its schema; 422 otherwise. */
  /**
   * `partial`: the kwargs are a registration's defaults, judged only on the fields they give.
   * `field`: what a refusal calls them (the request's field: `kwargs`, or a registration's `defaults`).
   */
  inspect(entrypoint: string, kwargs?: Record<string, unknown>, partial?: boolean, field?: string): Promise<InspectedJob>;
  close(): Promise<void>;
}

/**
 * Inspection threads are shared by the services open at once in a process with the same job roots,
 * packages and limits (a server and the CLI commands it runs in-process, the tests' harnesses): a
 * thread boots in about 0.3 s, while a check on a booted thread with the module loaded takes well
 * under a millisecond. The last service to close ends them (a live thread would keep the process).
 */
const INSPECTION_THREADS = 2;
const sharedPools = new Map<string, { pool: ThreadPool; users: number }>();

function poolFor(options: ThreadOptions): { pool: ThreadPool; release(): Promise<void> } {
  const key = JSON.stringify([options.setup.jobRoots, options.setup.jobPackages, options.memoryMb]);
  let shared = sharedPools.get(key);
  if (!shared) {
    // Two threads: one slow module does not hold up every other check.
    shared = { pool: new ThreadPool(INSPECTION_THREADS, options), users: 0 };
    sharedPools.set(key, shared);
  }
  shared.users += 1;
  const entry = shared;
  let released = false;
  return {
    pool: entry.pool,
    async release() {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      sharedPools.delete(key);
      await entry.pool.close();
    },
  };
}

/** `timeoutMs`: how long a module may take to load before the check gives up on it (and its thread). */
export function createJobInspector(options: ThreadOptions, timeoutMs: number): JobInspector {
  const { pool, release } = poolFor(options);
  const inspectOnce = async (entrypoint: string, kwargs?: Record<string, unknown>, partial?: boolean, field?: string): Promise<InspectedJob> => {
    const thread = await pool.acquire();
    let reusable = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The limit is the module's own loading time, not the thread's boot (slow on a busy machine).
      await thread.ready;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(invalid(`module of "${entrypoint}" did not finish loading within ${timeoutMs / 1000} s`)), timeoutMs);
      });
      const outcome = await Promise.race([thread.inspect({ type: "inspect", entrypoint, kwargs, partial, field }), timeout]);
      if (outcome.ok) {
        reusable = true;
        return outcome.job!;
      }
      // Kwargs that do not fit the schema are the caller's mistake; the module itself is fine.
      // A module that changed since the thread loaded it is not: the thread goes.
      reusable = outcome.loaded && outcome.error?.code !== MODULE_CHANGED;
      const refusal = fromErrorData(outcome.error!);
      throw refusal instanceof ServiceError ? refusal : invalid(`entrypoint could not be checked: ${refusal.message}`);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      throw invalid(`module of "${entrypoint}" could not be loaded: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
      pool.release(thread, reusable);
    }
  };
  return {
    async inspect(entrypoint, kwargs, partial, field) {
      // The file changed since a thread loaded it: that thread is replaced and the check goes to
      // the next one, until a fresh thread checks the file as it is now (each pool thread at most once).
      for (let tries = 1; ; tries++) {
        try {
          return await inspectOnce(entrypoint, kwargs, partial, field);
        } catch (error) {
          if (!(error instanceof ServiceError && error.code === MODULE_CHANGED) || tries > INSPECTION_THREADS) throw error;
        }
      }
    },
    close: release,
  };
}
