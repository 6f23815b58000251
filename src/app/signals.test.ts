import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createLogger } from "../core/log.js";
import { exitIfStopHangs } from "./signals.js";

const ROOT = join(import.meta.dirname, "..", "..");

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

describe("a second stop signal", () => {
  const start = (mode: string) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/run-ts.mjs"), "test/fixtures/stop-signals.ts", mode], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (chunk) => (err += chunk));
    let ended = "running";
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => {
        ended = `exited with ${code ?? signal}`;
        resolve({ code, signal });
      }),
    );
    // The child's state in the message: a failure says whether it had ended.
    const said = (text: string) => vi.waitFor(() => expect(err, `the child ${ended}`).toContain(text), { timeout: 30_000, interval: 20 });
    return { child, exited, said, err: () => err };
  };

  // Found by trying the product: an operator's second Ctrl-C during a worker's grace period killed
  // it mid-stop (exit 143), its row left ACTIVE and its tasks held until it was declared LOST.
  it("during a bounded stop is said and ignored: the stop ends cleanly", async () => {
    const p = start("bounded");
    try {
      await p.said("ready");
      p.child.kill("SIGTERM");
      await p.said("got SIGTERM");
      p.child.kill("SIGINT");
      await p.said("WARNING the fixture got SIGINT again: it is already stopping and ends within");
      expect(await p.exited).toEqual({ code: 0, signal: null });
      expect(p.err()).toContain("stopped");
    } finally {
      p.child.kill("SIGKILL");
    }
  }, 60_000);

  // Found by review: with nothing bounding the stop (a startup waiting on a store), the second
  // signal was ignored in silence and only kill -9 ended the process.
  it("when nothing bounds the stop ends the process as the signal does by default", async () => {
    const p = start("hung");
    try {
      await p.said("ready");
      p.child.kill("SIGTERM");
      await p.said("got SIGTERM");
      p.child.kill("SIGINT");
      expect(await p.exited).toEqual({ code: null, signal: "SIGINT" });
    } finally {
      p.child.kill("SIGKILL");
    }
  }, 60_000);
});
