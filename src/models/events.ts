// The event stream's wire form (CONTRACT §10: GET /api/v0/events, text/event-stream), without any
// schema library: the web app and the CLI read it with the parser below.

export const EVENT_TYPES = ["job.updated", "task.updated", "task.log", "resync"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface JobUpdatedEvent {
  id: string;
  name: string;
  status: string;
}

export interface TaskUpdatedEvent {
  id: string;
  job_id: string;
  status: string;
  attempt: number;
}

/** Log text of the followed task (`?task_id=`); `offset` is the text's byte offset in the attempt's log. */
export interface TaskLogEvent {
  task_id: string;
  attempt: number;
  offset: number;
  text: string;
}

/** Something may have changed that the stream could not tell (a reconnect, a lost link): refetch. */
export interface ResyncEvent {
  reason: string;
}

export type StreamEvent =
  | { type: "job.updated"; id?: string; data: JobUpdatedEvent }
  | { type: "task.updated"; id?: string; data: TaskUpdatedEvent }
  | { type: "task.log"; id?: string; data: TaskLogEvent }
  | { type: "resync"; id?: string; data: ResyncEvent };

/**
 * An incremental reader of `text/event-stream` (the WHATWG format: `field: value` lines, a blank
 * line ends an event, `:` starts a comment). Feed it text as it arrives; it calls `onEvent` for each
 * complete event of a known type and ignores the rest, so a newer server's events do no harm.
 * `onId` hears every `id:` an event carries, data or not: a stream that starts with an id alone
 * tells a client where it is before any event came.
 */
export function createEventStreamParser(onEvent: (event: StreamEvent) => void, onId?: (id: string) => void): (chunk: string) => void {
  let buffered = "";
  let type = "";
  let id: string | undefined;
  let data: string[] = [];
  const dispatch = () => {
    if (id !== undefined) onId?.(id);
    if (data.length > 0 && (EVENT_TYPES as readonly string[]).includes(type)) {
      try {
        onEvent({ type, id, data: JSON.parse(data.join("\n")) } as StreamEvent);
      } catch {
        // Not JSON: not one of ours.
      }
    }
    type = "";
    id = undefined;
    data = [];
  };
  return (chunk) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.search(/\r\n|\r|\n/)) !== -1) {
      // A lone CR at the end may be the first half of a CRLF still on its way.
      if (end === buffered.length - 1 && buffered.endsWith("\r")) break;
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + (buffered.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") dispatch();
      else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") type = value;
        else if (field === "data") data.push(value);
        else if (field === "id") id = value;
      }
    }
  };
}

/**
 * Feeds a response body to `feed` (usually a parser) as text until the stream ends; rejects when
 * it is aborted or cut off.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, feed: (chunk: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    feed(decoder.decode(value, { stream: true }));
  }
}
