// GET /api/v0/events (CONTRACT §10): the engine's change feed as `text/event-stream`. Each
// connection gets the hub's batches (narrowed by ?job_id= or ?task_id=), the followed task's log
// lines as `task.log`, a comment every 15 s, and is cut off when it stops reading.

import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalid, notFound } from "../../core/errors.js";
import { isCanonicalId } from "../../core/ids.js";
import type { ServiceContext } from "../../operations/index.js";
import { requireJob } from "../../operations/lookups.js";
import { problemResponse } from "./openapi.js";

export const EVENTS_PATH = "/api/v0/events";

export interface EventStreamLimits {
  /** A comment line this often keeps proxies from closing an idle stream; the caller's credential is checked again then. */
  keepAliveMs: number;
  /** A connection whose unsent output grows past this is closed (the client reconnects and refetches). */
  maxBufferedBytes: number;
  /** How often a followed task's log file is checked for new lines. */
  logPollMs: number;
}

export const DEFAULT_EVENT_STREAM_LIMITS: EventStreamLimits = { keepAliveMs: 15_000, maxBufferedBytes: 1024 * 1024, logPollMs: 100 };

const idSchema = { type: "string", pattern: "^[1-9][0-9]{0,18}$" };

/** The stream's entry in the OpenAPI document (it is no operation: no MCP tool, no CLI command). */
export const EVENTS_PATH_ITEM = {
  get: {
    operationId: "stream_events",
    summary: "Stream job and task changes as server-sent events",
    description: [
      "Events (`event:` names, JSON `data:`): `job.updated` {id, name, status}; `task.updated` {id, job_id, status, attempt};",
      "with `task_id`, `task.log` {task_id, attempt, offset, text} carrying the task's log from the last 1 MiB of its current attempt on;",
      "`resync` {reason} when changes may have been missed (refetch what you show).",
      "Each change has an `id:`; reconnect with `Last-Event-ID` to get the ones missed while they are held, or a `resync`.",
      "A `: keep-alive` comment comes every 15 s. Clients react by refetching over REST; polling every 2 s stays the fallback.",
      "A client that stops reading is disconnected once 1 MiB waits unsent.",
    ].join(" "),
    tags: ["events"],
    parameters: [
      { name: "job_id", in: "query", required: false, schema: idSchema, description: "Only this job's events" },
      { name: "task_id", in: "query", required: false, schema: idSchema, description: "This task's events, its job's, and its log lines" },
      { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" }, description: "The last event id received, when reconnecting" },
    ],
    responses: {
      "200": { description: "The event stream (open until the client leaves)", content: { "text/event-stream": { schema: { type: "string" } } } },
      "401": problemResponse("Missing or invalid bearer token"),
      "404": problemResponse("No such task"),
      "422": problemResponse("Invalid filter"),
    },
  },
};

/** What EventSource waits before reconnecting, sent once per connection. */
const RETRY_MS = 2_000;

interface Filters {
  jobId?: bigint;
  taskId?: bigint;
}

function parseFilters(query: unknown): Filters {
  const filters: Filters = {};
  for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (key !== "job_id" && key !== "task_id") throw invalid(`unknown query parameter ${JSON.stringify(key.slice(0, 50))}: the stream takes job_id and task_id`);
    if (Array.isArray(value)) throw invalid(`${key} is given ${value.length} times: the stream follows one ${key === "job_id" ? "job" : "task"} (or every job, without it)`);
    if (typeof value !== "string" || !isCanonicalId(value)) throw invalid(`${key} must be an id (a decimal string without leading zeros, from 1)`);
    filters[key === "job_id" ? "jobId" : "taskId"] = BigInt(value);
  }
  return filters;
}

export function registerEventStream(
  app: FastifyInstance,
  service: ServiceContext,
  /** Any role may watch (viewers included): being authenticated is enough. */
  authenticate: (request: FastifyRequest) => Promise<void>,
  limits: EventStreamLimits = DEFAULT_EVENT_STREAM_LIMITS,
): void {
  // Ended as streams end (the chunked response's last chunk) when the server closes: cut off by
  // forceCloseConnections, a browser logged ERR_INCOMPLETE_CHUNKED_ENCODING for every open tab.
  const endings = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...endings]) end();
  });
  app.get(EVENTS_PATH, { onRequest: authenticate }, async (request, reply) => {
    const filters = parseFilters(request.query);
    const follower = filters.taskId === undefined ? undefined : await service.events.followTaskLog(filters.taskId);
    if (filters.taskId !== undefined && !follower) throw notFound(`task ${filters.taskId} does not exist`);
    // As for a task: a stream of a job that does not exist would stay silent for ever.
    if (filters.jobId !== undefined && !follower) await requireJob(service.db, String(filters.jobId));
    if (follower && filters.jobId !== undefined && follower.jobId !== filters.jobId) {
      throw invalid(`task ${filters.taskId} belongs to job ${follower.jobId}, not job ${filters.jobId}`);
    }
    const lastEventId = request.headers["last-event-id"];
    reply.hijack();
    reply.raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Reverse proxies (nginx) must pass events on as they come.
      "x-accel-buffering": "no",
    });
    // HEAD (fastify answers it with this handler) gets the headers and the end: Node withholds a
    // HEAD response's headers until it ends, so an open stream would leave the client waiting forever.
    if (request.method === "HEAD") return void reply.raw.end();
    openConnection(reply.raw, service, {
      jobId: filters.jobId ?? follower?.jobId,
      taskId: filters.taskId,
      follower,
      lastEventId: typeof lastEventId === "string" ? lastEventId : undefined,
      stillAllowed: () => authenticate(request).then(() => true, () => false),
      limits,
      endings,
    });
  });
}

/** One event of the hub, as subscribers receive it. */
type HubEvent = Parameters<Parameters<ServiceContext["events"]["subscribe"]>[0]>[0]["events"][number];

interface ConnectionOptions {
  jobId?: bigint;
  taskId?: bigint;
  follower?: Awaited<ReturnType<ServiceContext["events"]["followTaskLog"]>>;
  lastEventId?: string;
  stillAllowed: () => Promise<boolean>;
  limits: EventStreamLimits;
  /** Where the connection keeps its orderly end while it is open (the server's close calls it). */
  endings: Set<() => void>;
}

function openConnection(raw: ServerResponse, service: ServiceContext, options: ConnectionOptions): void {
  const { jobId, taskId, follower, limits } = options;
  const hub = service.events;
  let open = true;
  /** Events up to this number were sent already (replayed, or before this client came). */
  let sentUpTo = 0;
  // With a followed log, writes go in order through one chain: log lines read before a task's
  // status change are sent before it.
  let chain: Promise<void> = Promise.resolve();
  // Set once the first events are out; close() may run before (a replay past the buffer bound).
  let keepAlive: NodeJS.Timeout | undefined = undefined;
  let logPoll: NodeJS.Timeout | undefined;
  const inOrder = (step: () => Promise<void> | void) => {
    chain = chain.then(step).catch(() => close());
  };

  /**
   * `orderly` ends the response as a stream ends (a credential that expired, the server closing);
   * otherwise it is cut (a client that stopped reading: what waits unsent is dropped).
   */
  const close = (orderly = false) => {
    if (!open) return;
    open = false;
    options.endings.delete(end);
    unsubscribe();
    clearInterval(keepAlive);
    clearInterval(logPoll);
    if (orderly) raw.end();
    else raw.destroy();
  };
  const end = () => close(true);
  options.endings.add(end);
  /** Unsent output past the bound means the client stopped reading: cut it off, never buffer more. */
  const send = (text: string) => {
    if (!open || text === "") return;
    raw.write(text);
    if (raw.writableLength > limits.maxBufferedBytes) close();
  };
  const wanted = (type: string, eventJob?: bigint, eventTask?: bigint) =>
    type === "resync" || jobId === undefined || (eventJob === jobId && (taskId === undefined || type === "job.updated" || eventTask === taskId));

  /**
   * Sends what the followed log gained; `all` takes a last partial line too (the attempt ended).
   * Every call runs through `inOrder`, so two never read the file at once.
   */
  const pumpLog = async (all = false) => {
    if (!follower) return;
    for (let chunk = await follower.read(all); chunk && open; chunk = await follower.read(all)) {
      send(`event: task.log\ndata: ${JSON.stringify({ task_id: String(taskId), attempt: chunk.attempt, offset: chunk.offset, text: chunk.text })}\n\n`);
    }
  };

  const unsubscribe = hub.subscribe(({ events, text }) => {
    if (!open) return;
    // The common case, every event for a client that narrowed nothing: the batch's shared text.
    if (jobId === undefined && (events[0]?.seq ?? 0) > sentUpTo) {
      sentUpTo = events[events.length - 1]?.seq ?? sentUpTo;
      return send(text);
    }
    for (const event of events) {
      if (event.seq <= sentUpTo || !wanted(event.type, event.jobId, event.taskId)) continue;
      sentUpTo = event.seq;
      deliver(event);
    }
  });

  /** Sends a wanted event; with a followed log, in order with its lines. */
  function deliver(event: HubEvent): void {
    if (!follower) send(event.frame);
    else if (event.taskId !== taskId) inOrder(() => send(event.frame));
    else {
      // The followed task changed: its log so far first, then the change; a new attempt logs to a new file.
      inOrder(async () => {
        await pumpLog(true);
        await follower.switchTo(event.attempt ?? 0);
        send(event.frame);
      });
    }
  }

  send(`retry: ${RETRY_MS}\n: connected\n\n`);
  const missed = options.lastEventId === undefined ? undefined : hub.since(options.lastEventId);
  if (options.lastEventId !== undefined && missed === undefined) {
    sentUpTo = hub.lastSeq;
    send(`id: ${hub.lastId}\nevent: resync\ndata: ${JSON.stringify({ reason: "some events since Last-Event-ID are no longer held: refetch" })}\n\n`);
  } else if (missed !== undefined) {
    // Replayed as live events are: a followed task's end after its log's backlog, not before.
    for (const event of missed) if (wanted(event.type, event.jobId, event.taskId)) deliver(event);
    sentUpTo = missed[missed.length - 1]?.seq ?? hub.lastSeq;
  } else {
    // A new client starts from now; an id with no data tells EventSource where it is.
    sentUpTo = hub.lastSeq;
    send(`id: ${hub.lastId}\n\n`);
  }

  if (!open) return;
  keepAlive = setInterval(() => {
    send(": keep-alive\n\n");
    // A token that expired or was rotated since the stream opened ends it (the client reconnects).
    void options.stillAllowed().then((allowed) => allowed || end());
  }, limits.keepAliveMs);
  if (follower) {
    let pollQueued = false;
    logPoll = setInterval(() => {
      if (pollQueued) return;
      pollQueued = true;
      inOrder(() => ((pollQueued = false), pumpLog()));
    }, limits.logPollMs);
    inOrder(() => pumpLog());
  }
  raw.on("close", () => close());
  raw.on("error", () => close());
}
