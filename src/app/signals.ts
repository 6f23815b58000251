// How a long-running process of the binary learns to stop: SIGINT (a terminal's Ctrl-C) or SIGTERM
// (a supervisor), whichever comes first.

/** Resolves with the name of the first stop signal this process receives. */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
