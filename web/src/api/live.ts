// Live updates (CONTRACT §10): the event stream tells the page what changed and the page refetches
// those queries at once; polling every 2 s stays on underneath. Browsers allow a handful of
// connections per server across all tabs, so one tab (the holder of a Web Lock) keeps the only
// stream and passes its events to the other tabs over a BroadcastChannel; when that tab closes,
// the next one takes the lock and the stream over.

import type { QueryClient } from "@tanstack/react-query";
import { type StreamEvent, createEventStreamParser, readEventStream } from "../../../src/models/events.js";
import type { ApiClient } from "./client.js";

const LOCK = "jobhouse.events";
const CHANNEL = "jobhouse.events";
/** Refetches caused by events stay at least this far apart (the first after a quiet spell goes at once). */
const REFETCH_GAP_MS = 1_000;
const RECONNECT_MIN_MS = 1_000;
const RECONNECT_MAX_MS = 15_000;

export type LiveState = "connecting" | "live" | "offline";

type Message = { kind: "event"; event: StreamEvent } | { kind: "state"; state: LiveState } | { kind: "hello" };

/** `path` is `base` or below it: `/jobs/7`, `/jobs/7/stats`, `/jobs/7?x`, never `/jobs/70`. */
const within = (path: string, base: string) => path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`);
const isJobList = (path: string) => path === "/jobs" || path.startsWith("/jobs?");

/** Which cached queries (keyed by their API path) an event makes stale. */
export function isAffected(path: string, event: StreamEvent): boolean {
  switch (event.type) {
    case "job.updated":
      return isJobList(path) || within(path, `/jobs/${event.data.id}`) || within(path, "/registered-jobs");
    case "task.updated":
      // Job lists show task counts; the job's detail and stats, and the task itself, change.
      return isJobList(path) || within(path, `/jobs/${event.data.job_id}`) || within(path, `/tasks/${event.data.id}`);
    case "task.log":
      return within(path, `/tasks/${event.data.task_id}/logs`);
    case "resync":
      return true;
  }
}

/** Starts live updates for this tab; returns how to stop them. `onState` hears whether events flow. */
export function startLiveUpdates(client: ApiClient, queryClient: QueryClient, onState: (state: LiveState) => void): () => void {
  const stopped = new AbortController();
  const refetch = createThrottledRefetch(queryClient);
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;
  let state: LiveState = "connecting";
  let leading = false;
  const setState = (next: LiveState) => {
    state = next;
    onState(next);
    if (leading) channel?.postMessage({ kind: "state", state: next } satisfies Message);
  };

  // Every tab reacts to the events; the leader also passes them on.
  const onEvent = (event: StreamEvent) => {
    refetch(event);
    if (leading) channel?.postMessage({ kind: "event", event } satisfies Message);
  };
  if (channel) {
    channel.onmessage = ({ data }: MessageEvent<Message>) => {
      if (data.kind === "event") refetch(data.event);
      else if (data.kind === "state" && !leading) onState(data.state);
      else if (data.kind === "hello" && leading) channel.postMessage({ kind: "state", state } satisfies Message);
    };
    channel.postMessage({ kind: "hello" } satisfies Message);
  }

  const lead = async () => {
    leading = true;
    await followStream(client, onEvent, setState, stopped.signal);
  };
  if (channel && typeof navigator !== "undefined" && navigator.locks) {
    // Held until this tab closes or stops: the other tabs queue for it.
    navigator.locks.request(LOCK, { signal: stopped.signal }, lead).catch(() => undefined);
  } else {
    void lead();
  }

  return () => {
    stopped.abort();
    channel?.close();
  };
}

/** Keeps one stream open, reconnecting with Last-Event-ID (so missed events come, or a resync). */
async function followStream(client: ApiClient, onEvent: (event: StreamEvent) => void, setState: (state: LiveState) => void, stopped: AbortSignal): Promise<void> {
  let lastId: string | undefined;
  let delayMs = RECONNECT_MIN_MS;
  while (!stopped.aborted) {
    setState("connecting");
    try {
      const response = await client.stream("/events", lastId ? { "last-event-id": lastId } : {}, stopped);
      setState("live");
      delayMs = RECONNECT_MIN_MS;
      const parse = createEventStreamParser(onEvent, (id) => (lastId = id));
      await readEventStream(response.body!, parse);
    } catch {
      // Refused (signed out, or the server is older) or dropped: polling carries on meanwhile.
    }
    if (stopped.aborted) return;
    setState("offline");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(RECONNECT_MAX_MS, delayMs * 2);
  }
}

/** Collects events and refetches the active queries they affect, at most once per REFETCH_GAP_MS. */
function createThrottledRefetch(queryClient: QueryClient): (event: StreamEvent) => void {
  let pending: StreamEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastAt = 0;
  const run = () => {
    timer = undefined;
    lastAt = Date.now();
    const events = pending;
    pending = [];
    void queryClient.invalidateQueries({
      predicate: (query) => typeof query.queryKey[0] === "string" && events.some((event) => isAffected(query.queryKey[0] as string, event)),
    });
  };
  return (event) => {
    pending.push(event);
    timer ??= setTimeout(run, Math.max(0, lastAt + REFETCH_GAP_MS - Date.now()));
  };
}
