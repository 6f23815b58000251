// Child processes for the benchmarks: start one and wait for the line that says it is ready; stop
// a set of them (SIGTERM, then SIGKILL after 10 s).

import { type ChildProcess, spawn } from "node:child_process";

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
