// How a long-running process of the binary learns to stop: SIGINT (a terminal's Ctrl-C) or SIGTERM
// (a supervisor), whichever comes first.

import { ERROR_KINDS } from "../core/errors.js";
import type { Logger } from "../core/log.js";

/** What a stop signal after the first does: set once the process says how long its stop may take. */
let repeatedStopSignal: ((signal: NodeJS.Signals) => void) | undefined;

/** What bin/early-stop.mjs leaves for a long-running command: a signal heard while loading. */
interface EarlyStop {
  signal: NodeJS.Signals | undefined;
  stopListening(): void;
}

/**
 * Resolves with the name of the first stop signal this process receives, counting one that came
 * while the binary loaded (bin/early-stop.mjs), whose listener this one replaces.
 */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  const early = (globalThis as { [key: symbol]: EarlyStop | undefined })[Symbol.for("jobhouse.early-stop")];
  const heard = new Promise<NodeJS.Signals>((resolve) => {
    let stopping = early?.signal !== undefined;
    // The listener stays: a second Ctrl-C or SIGTERM during the stop (an operator's reflex) was the
    // default kill, exit 143 mid-stop, a worker left ACTIVE with its tasks held until it was LOST.
    // The stop is bounded (exitIfStopHangs); a repeat is only said, and kill -9 still ends it at once.
    const stop = (signal: NodeJS.Signals) => {
      if (!stopping) {
        stopping = true;
        resolve(signal);
      } else if (repeatedStopSignal) {
        repeatedStopSignal(signal);
      } else {
        // Nothing bounds this stop (a startup that waits on a store, a stop of its own making):
        // the signal does what it does by default, as a second Ctrl-C always did.
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        process.kill(process.pid, signal);
      }
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  // Ours is in place first, so no moment is left without a listener (the default kill).
  early?.stopListening();
  return early?.signal ? Promise.resolve(early.signal) : heard;
}

export interface StopListener {
  /** Resolves with the first stop signal. */
  readonly signal: Promise<NodeJS.Signals>;
  /** The signal, once it came (undefined until then). */
  readonly received: NodeJS.Signals | undefined;
}

/**
 * Listens for the stop signals from now on. A long-running command calls this first: a SIGTERM
 * during its startup (store checks, registration: seconds on a busy machine) killed it by default
 * (exit 143, a worker row left ACTIVE); heard, it lets the startup settle and the process end with 0.
 */
export function listenForStop(): StopListener {
  let received: NodeJS.Signals | undefined;
  const signal = untilStopSignal().then((s) => (received = s));
  return {
    signal,
    get received() {
      return received;
    },
  };
}

/**
 * Runs a startup step; true when it passed and no stop came meanwhile. A step that fails after a
 * stop came is false, not its error: the operator asked the process to end, not about its stores.
 */
export async function stepUnlessStopped(stop: StopListener, step: () => Promise<void>): Promise<boolean> {
  try {
    await step();
  } catch (error) {
    if (stop.received) return false;
    throw error;
  }
  return stop.received === undefined;
}

/**
 * Holds the process open until the returned release is called. A long-running process waits on a
 * signal while its own timers and sockets are unref'd (so that, once stopped, nothing of theirs
 * holds the exit); with no other handle it ended the moment its last socket closed (a dropped
 * PostgreSQL connection): exit 13 for a top-level await left unsettled, nothing logged.
 */
export function holdProcessOpen(): () => void {
  const timer = setInterval(() => undefined, 2 ** 30);
  return () => clearInterval(timer);
}

/** How long past its own grace a process asked to stop may take before it ends regardless. */
export const STOP_BOUND_MS = 10_000;

/**
 * Once a process is asked to stop: a shutdown that hangs (a statement waiting on a PostgreSQL that
 * stopped answering without closing the connection) ends the process anyway after `boundMs`, with
 * a line saying so and exit code 10, rather than holding it until a supervisor's SIGKILL. The
 * timer holds nothing open: a shutdown that finishes exits as it would.
 */
export function exitIfStopHangs(log: Logger, what: string, boundMs: number, exit: (code: number) => void = (code) => process.exit(code)): () => void {
  const deadline = Date.now() + boundMs;
  repeatedStopSignal = (signal) =>
    log.warn(`${what} got ${signal} again: it is already stopping and ends within ${Math.max(1, Math.ceil((deadline - Date.now()) / 1000))} s; kill -9 ends it at once, without a clean stop`);
  const timer = setTimeout(() => {
    log.error(`${what} did not stop within ${boundMs / 1000} s (a store that does not answer?): exiting without a clean stop`);
    exit(ERROR_KINDS.internal.exitCode);
  }, boundMs);
  timer.unref();
  return () => clearTimeout(timer);
}
