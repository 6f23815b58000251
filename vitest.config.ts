// Test runner settings: forks (chDB allows one data directory per process), generous timeouts for
// real databases, "jobhouse" resolving to the SDK as it does for job files, and the summary line CI reads.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { jobhouse: fileURLToPath(new URL("./src/sdk/index.ts", import.meta.url)) },
  },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "web/src/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/reporter.ts"],
    globalSetup: ["./test/support/global-teardown.ts"],
  },
});
