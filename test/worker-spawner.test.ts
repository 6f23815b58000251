// Why a worker command cannot run, said before spawning (POST /workers answers 503 with it).

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detachedWorkerSpawner, refuseUnrunnable, spawnedWorkerLogDir } from "../src/app/worker-spawner.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/log.js";

describe("SERVICE_WORKER_COMMAND checks", () => {
  // Found by trying the product: a name missing from PATH, or a directory, got "could not be started".
  it("names what is wrong: missing, missing from PATH, a directory, not executable", () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-command-"));
    try {
      const plain = join(dir, "plain");
      writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
      expect(() => refuseUnrunnable(join(dir, "missing"))).toThrow(`${join(dir, "missing")} does not exist`);
      expect(() => refuseUnrunnable("no-such-jobhouse-command")).toThrow("no-such-jobhouse-command is not found on PATH");
      expect(() => refuseUnrunnable(dir)).toThrow(`${dir} is a directory`);
      expect(() => refuseUnrunnable(plain)).toThrow(`${plain} is not executable`);
      expect(() => refuseUnrunnable("sh")).not.toThrow();
      expect(() => refuseUnrunnable(process.execPath)).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Found by trying a deployment: a wrapper that exited 3 at once got 202 and a log line saying it
  // started; a script whose interpreter is missing got "could not be started" with no reason.
  it("a command that fails at once is refused with its reason; one that runs or exits 0 is started", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobhouse-spawn-"));
    const script = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text, { mode: 0o755 });
      return path;
    };
    const spawnWith = (command: string) => {
      const config = loadConfig({ SERVICE_HOME: join(dir, "home"), SERVICE_WORKER_COMMAND: command });
      return { spawn: detachedWorkerSpawner(config, createLogger("error", () => undefined)), logs: () => readdirSync(spawnedWorkerLogDir(config)) };
    };
    try {
      const failing = spawnWith(script("failing", "#!/bin/sh\necho 'cannot reach the store' >&2\nexit 3\n"));
      await expect(failing.spawn(null)).rejects.toThrow(/failing exited at once with code 3: cannot reach the store$/);
      const noInterpreter = spawnWith(script("orphan", "#!/nonexistent/interpreter\n"));
      await expect(noInterpreter.spawn(null)).rejects.toThrow(/orphan could not be started \(.*ENOENT.*: for a script, is the interpreter its #! line names there\?\)/);
      // Nothing was written by a process that never ran: no empty file is left behind.
      expect(noInterpreter.logs()).toHaveLength(1);
      await expect(spawnWith("/bin/true").spawn(null)).resolves.toBeUndefined();
      await expect(spawnWith(script("sleeper", "#!/bin/sh\nsleep 1\n")).spawn(2)).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
