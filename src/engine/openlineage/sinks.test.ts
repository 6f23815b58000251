import { describe, expect, it } from "vitest";
import { type Transport, startSink } from "./sinks.js";

const losses: string[] = [];
const onLoss = (kind: string, count: number, _label: string, reason: string) => void losses.push(`${count} ${kind} (${reason})`);

describe("a sink", () => {
  it("delivers in order and retries a failure after its backoff", async () => {
    const seen: string[] = [];
    let failures = 1;
    const transport: Transport = {
      label: "test",
      async send(line) {
        seen.push(line);
        if (failures-- > 0) throw new Error("HTTP 500");
      },
    };
    const sink = startSink(transport, { onLoss });
    sink.push("a");
    sink.push("b");
    await sink.close(Date.now() + 2_000);
    expect(seen).toEqual(["a", "a", "b"]);
    expect(sink.counts()).toEqual({ sent: 2, dropped: 0, failed: 0 });
  });

  it("drops what its full queue cannot take, and what the shutdown deadline leaves", async () => {
    losses.length = 0;
    const never: Transport = { label: "test", send: (_line, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))) };
    const sink = startSink(never, { onLoss, queueLimit: 2 });
    for (const line of ["a", "b", "c", "d"]) sink.push(line);
    await sink.close(Date.now() + 50);
    // Pushing never waits: "a" and "b" fill the queue, "c" and "d" are refused; then "a" goes out
    // and hangs until the deadline, and "b" is still waiting.
    expect(sink.counts()).toEqual({ sent: 0, dropped: 4, failed: 0 });
    expect(losses).toEqual(["1 dropped (queue full)", "1 dropped (queue full)", "1 dropped (shutting down)", "1 dropped (shutting down)"]);
  });
});
