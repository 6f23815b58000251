// Stop signals heard while the binary loads (before app/signals.ts can listen), for the commands
// that run until stopped. A one-shot command keeps the default: SIGTERM ends it at once.

const LONG_RUNNING = [["server", "start"], ["local", "start"], ["worker", "start"], ["background", "start"]];

/** Where app/signals.ts finds a signal that came while loading. */
export const EARLY_STOP = Symbol.for("jobhouse.early-stop");

export function listenEarlyForStop(args) {
  if (!LONG_RUNNING.some(([a, b]) => args.some((arg, i) => arg === a && args[i + 1] === b))) return;
  const early = { signal: undefined, stopListening: () => {} };
  const hear = (signal) => {
    early.signal ??= signal;
  };
  process.on("SIGINT", hear);
  process.on("SIGTERM", hear);
  early.stopListening = () => {
    process.off("SIGINT", hear);
    process.off("SIGTERM", hear);
  };
  globalThis[EARLY_STOP] = early;
  // At debug level, say so (in the logger's formats): a slow start can be told apart from a hung one.
  if (process.env.SERVICE_LOG_LEVEL?.trim().toLowerCase() === "debug") {
    const time = new Date().toISOString();
    const msg = "loading; a stop signal from now on ends the command once its startup settles";
    const json = process.env.SERVICE_LOG_FORMAT?.trim().toLowerCase() === "json";
    process.stderr.write(json ? JSON.stringify({ time, level: "debug", msg }) + "\n" : `${time} DEBUG ${msg}\n`);
  }
}
