// A test's client of GET /api/v0/events: fetch with a streamed body, read with the same parser the
// web app and the CLI use, every event kept in arrival order.

import { type StreamEvent, createEventStreamParser, readEventStream } from "../../src/models/events.js";
import { waitFor } from "./engine.js";

export interface EventClient {
  status: number;
  events: StreamEvent[];
  /** The raw text received, comments included. */
  text: () => string;
  /** Resolves when the server ends the stream (or the client closed it). */
  ended: Promise<void>;
  /** Whether the server cut the stream off (the response's end never came) rather than ending it. */
  wasCut: () => boolean;
  next(what: string, match: (event: StreamEvent) => boolean, limitMs?: number): Promise<StreamEvent>;
  close(): void;
}

export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventClient> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: abort.signal });
  const events: StreamEvent[] = [];
  let text = "";
  let cut = false;
  const parse = createEventStreamParser((event) => events.push(event));
  const ended = (async () => {
    if (!response.ok || !response.body) return void (text = await response.text());
    const feed = (chunk: string) => {
      text += chunk;
      parse(chunk);
    };
    // Ends by close() or by the server cutting the stream off.
    await readEventStream(response.body, feed).catch(() => void (cut = !abort.signal.aborted));
  })();
  return {
    status: response.status,
    events,
    text: () => text,
    ended,
    wasCut: () => cut,
    next: (what, match, limitMs = 15_000) => waitFor(what, async () => events.find(match), limitMs),
    close: () => abort.abort(),
  };
}

/** The statuses a stream reported for one job, in order. */
export const jobStatusesIn = (events: StreamEvent[], jobId: string) =>
  events.flatMap((e) => (e.type === "job.updated" && e.data.id === jobId ? [e.data.status] : []));

/** The statuses a stream reported for one task, as status@attempt, in order. */
export const taskStatusesIn = (events: StreamEvent[], taskId: string) =>
  events.flatMap((e) => (e.type === "task.updated" && e.data.id === taskId ? [`${e.data.status}@${e.data.attempt}`] : []));
