// For suites that run the real binary as processes: where it is, and a free loopback port.

import { createServer } from "node:net";
import { join } from "node:path";

export const BIN = join(import.meta.dirname, "..", "..", "bin", "jobhouse.mjs");

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}
