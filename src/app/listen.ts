// Binding the HTTP port, refused in one line: a port that is taken (or not ours to bind) stops the
// start before anything else runs, instead of a stack trace or a process that lingers.

import { createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { conflict, unavailable } from "../core/errors.js";

function refusal(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  // Taken by another process: a conflict (exit 3), not an unexpected failure (10).
  if (code === "EADDRINUSE") return conflict(`port ${port} on ${host} is already in use: stop what listens there or choose another with --port`, "port_in_use");
  if (code === "EACCES") return unavailable(`port ${port} on ${host} may not be bound by this user: choose a port above 1023 with --port`, "port_refused");
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL") return unavailable(`${host} cannot be resolved to an address of this machine (${code}): choose another with --host`, "host_unavailable");
  if (code === "EADDRNOTAVAIL") return unavailable(`${host} is not an address of this machine: choose another with --host`, "host_unavailable");
  return error;
}

/** Binds and releases the port before the process opens its stores: a taken port starts nothing. */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", (error) => reject(refusal(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Listens; the port can still be taken between the probe and now, and is refused the same way,
 * with the app closed.
 */
export async function listenOrRefuse(app: FastifyInstance, host: string, port: number): Promise<number> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    await app.close().catch(() => undefined);
    throw refusal(error, host, port);
  }
  const address = app.server.address();
  return typeof address === "object" && address ? address.port : port;
}
