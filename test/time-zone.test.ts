// The process's time zone does not move stored DateTime values: chDB took the zone from TZ, and
// with TZ=Asia/Tokyo a UTC instant was stored 9 hours off (toUnixTimestamp 1704034800).

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { BIN } from "./support/processes.js";

it("stores a DateTime without a zone as UTC under TZ=Asia/Tokyo (embedded chDB)", () => {
  const home = mkdtempSync(join(tmpdir(), "jobhouse-tz-"));
  try {
    const run = spawnSync(process.execPath, [BIN, "run-job", "test/fixtures/data-jobs.ts:utcDateTime", "--wait", "--json"], {
      env: { ...process.env, TZ: "Asia/Tokyo", SERVICE_HOME: home, SERVICE_SQL_URL: "", SERVICE_CH_URL: "" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: { unix: 1704067200, hours: 12 } });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
