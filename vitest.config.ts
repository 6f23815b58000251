// Test runner settings: forks (chDB allows one data directory per process), generous timeouts for
// real databases, and the summary line CI reads.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/reporter.ts"],
  },
});
