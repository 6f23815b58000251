// Why a worker command cannot run, said before spawning (POST /workers answers 503 with it).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { refuseUnrunnable } from "../src/app/worker-spawner.js";

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
});
