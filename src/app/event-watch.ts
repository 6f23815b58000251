// Where the CLI hears that a job or task changed, so `run-job --wait` and `task logs --follow` react
// at once instead of on their next poll: a running local server's event stream, or this process's
// own change feed (its in-process worker, or PostgreSQL NOTIFY in distributed mode).

import type { ChangeFeed } from "../engine/changes.js";
import { type StreamEvent, createEventStreamParser, readEventStream } from "../models/events.js";
import type { EventFilter, WatchEvents } from "../surfaces/cli/follow.js";
import type { LocalCredential } from "./http-caller.js";

/** GET /api/v0/events on a server; rejects when the stream cannot be opened (the caller polls instead). */
export function watchOverHttp(baseUrl: string, credential?: LocalCredential): WatchEvents {
  return async (filter, onEvent, onGone) => {
    const url = new URL("/api/v0/events", baseUrl);
    if (filter.jobId) url.searchParams.set("job_id", filter.jobId);
    if (filter.taskId) url.searchParams.set("task_id", filter.taskId);
    const abort = new AbortController();
    const headers: Record<string, string> = { accept: "text/event-stream", ...(credential ? { [credential.header]: credential.secret } : {}) };
    const response = await fetch(url, { headers, signal: abort.signal });
    if (!response.ok || !response.body) {
      abort.abort();
      throw new Error(`the event stream answered HTTP ${response.status}`);
    }
    // Closed by the caller, or the server went away (then told): the caller's polling carries on.
    void readEventStream(response.body, createEventStreamParser(onEvent))
      .catch(() => undefined)
      .then(() => {
        if (!abort.signal.aborted) onGone?.();
      });
    return () => abort.abort();
  };
}

/** This process's change feed, heard from other processes too once it listens. */
export function watchInProcess(changes: ChangeFeed): WatchEvents {
  return async (filter, onEvent) => {
    await changes.listen();
    return changes.subscribe(({ change }) => {
      const event = toStreamEvent(change);
      if (event && matches(filter, event)) onEvent(event);
    });
  };
}

function toStreamEvent(change: Parameters<Parameters<ChangeFeed["subscribe"]>[0]>[0]["change"]): StreamEvent | undefined {
  if (change.type === "resync") return { type: "resync", data: { reason: "the link to other processes was re-established" } };
  if (change.type === "job") return { type: "job.updated", data: { id: String(change.id), name: change.name ?? "", status: change.status } };
  return { type: "task.updated", data: { id: String(change.id), job_id: String(change.jobId), status: change.status, attempt: change.attempt } };
}

function matches(filter: EventFilter, event: StreamEvent): boolean {
  if (event.type === "job.updated") return !filter.jobId || event.data.id === filter.jobId;
  if (event.type === "task.updated") return (!filter.jobId || event.data.job_id === filter.jobId) && (!filter.taskId || event.data.id === filter.taskId);
  return true;
}
