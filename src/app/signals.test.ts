import { expect, it, vi } from "vitest";
import { createLogger } from "../core/log.js";
import { exitIfStopHangs } from "./signals.js";

// Found by trying the product: with PostgreSQL's connections stalled (not closed), no process
// asked to stop exited; each waited for a statement that would never answer.
it("ends a process whose stop hangs after its bound, saying so, and not one that stopped in time", () => {
  vi.useFakeTimers();
  try {
    const lines: string[] = [];
    const exits: number[] = [];
    const log = createLogger("info", (line) => lines.push(line));
    exitIfStopHangs(log, "worker 7", 15_000, (code) => exits.push(code));
    vi.advanceTimersByTime(14_999);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([10]);
    expect(lines.join("")).toMatch(/ERROR worker 7 did not stop within 15 s \(a store that does not answer\?\): exiting without a clean stop/);
    const stopped = exitIfStopHangs(log, "the server", 1_000, (code) => exits.push(code));
    stopped();
    vi.advanceTimersByTime(5_000);
    expect(exits).toEqual([10]);
  } finally {
    vi.useRealTimers();
  }
});
