import { tmpdir } from "node:os";
import { expect, it } from "vitest";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/log.js";
import { warnMissingJobRoots } from "./processes.js";

// Found by trying the deployment guide: a mistyped SERVICE_JOBS_PATH (or an env file's comment
// kept in the value) started every process without a word, and each task then failed.
it("warns at start for each SERVICE_JOBS_PATH folder that is not there", () => {
  const lines: string[] = [];
  const config = loadConfig({ SERVICE_HOME: tmpdir(), SERVICE_JOBS_PATH: `${tmpdir()}:/srv/no-such-pipelines   # a comment` });
  warnMissingJobRoots({ config, log: createLogger("info", (line) => lines.push(line)) });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/WARNING SERVICE_JOBS_PATH names "\/srv\/no-such-pipelines {3}# a comment", which is not a folder on this machine/);
  lines.length = 0;
  warnMissingJobRoots({ config: loadConfig({ SERVICE_HOME: tmpdir() }), log: createLogger("info", (line) => lines.push(line)) });
  expect(lines).toEqual([]);
});
