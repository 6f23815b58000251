// Child processes for the benchmarks: start one and wait for the line that says it is ready; stop
// a set of them (SIGTERM, then SIGKILL after 10 s); CPU time used by children and by PostgreSQL.

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

export function startChild(args: string[], env: NodeJS.ProcessEnv, readyLine: RegExp): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (readyLine.test(output)) resolve({ child, output: () => output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code} before it was ready:\n${output}`)));
  });
}

export async function stopChildren(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        }),
    ),
  );
}

/** CPU time (user + system, ms) a process has used, from /proc; 0 once it is gone. */
function processCpuMs(pid: number, withReapedChildren = false): number {
  try {
    // Fields after the command (which may hold spaces) start at state: utime is the 12th of them.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]) + (withReapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

const CLOCK_TICKS = 100; // sysconf(_SC_CLK_TCK) on Linux

/**
 * CPU time used so far by PostgreSQL on this machine: every live postgres process plus what the
 * postmaster has reaped from exited backends. Differences between two calls are what the database
 * spent in between, whichever connections did the work.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let name: string;
    try {
      name = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (name === "postgres") total += processCpuMs(Number(entry), true);
  }
  return total;
}

/** CPU time (ms) used so far by these child processes (threads included). */
export const childrenCpuMs = (children: ChildProcess[]): number => children.reduce((sum, c) => sum + (c.pid ? processCpuMs(c.pid) : 0), 0);
