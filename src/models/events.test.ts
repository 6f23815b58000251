import { describe, expect, it } from "vitest";
import { type StreamEvent, createEventStreamParser } from "./events.js";

describe("the event stream parser", () => {
  const parseAll = (...chunks: string[]) => {
    const events: StreamEvent[] = [];
    const feed = createEventStreamParser((e) => events.push(e));
    for (const chunk of chunks) feed(chunk);
    return events;
  };

  it("reads events split anywhere, with CRLF, comments and unknown types", () => {
    const text = 'retry: 2000\n: connected\n\nid: a-1\nevent: job.updated\ndata: {"id":"1","name":"n","status":"PENDING"}\n\n: keep-alive\n\r\nevent: later.kind\ndata: {}\n\nevent: resync\r\ndata: {"reason":"r"}\r\n\r\n';
    const whole = parseAll(text);
    expect(whole).toEqual([
      { type: "job.updated", id: "a-1", data: { id: "1", name: "n", status: "PENDING" } },
      { type: "resync", id: undefined, data: { reason: "r" } },
    ]);
    // Byte by byte gives the same events (a CR at a chunk's end waits for its LF).
    expect(parseAll(...text.split(""))).toEqual(whole);
  });

  it("tells of every id, an id-only event's too", () => {
    const ids: string[] = [];
    const feed = createEventStreamParser(() => undefined, (id) => ids.push(id));
    feed('id: a-0\n\n: keep-alive\n\nid: a-1\nevent: resync\ndata: {"reason":"r"}\n\n');
    expect(ids).toEqual(["a-0", "a-1"]);
  });

  it("joins multi-line data and skips data that is not JSON", () => {
    expect(parseAll('event: task.log\ndata: {"task_id":"1",\ndata: "attempt":1,"offset":0,"text":"x"}\n\nevent: task.log\ndata: nope\n\n')).toEqual([
      { type: "task.log", id: undefined, data: { task_id: "1", attempt: 1, offset: 0, text: "x" } },
    ]);
  });
});
