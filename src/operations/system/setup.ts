// setup: make the service ready on this configuration; idempotent (directories, SQL schema,
// column-store database).

import { mkdir } from "node:fs/promises";
import { z } from "zod";
import { SetupResult } from "../../models/system.js";
import { ConfigError } from "../../core/config.js";
import { openColumnStore } from "../../data/client.js";
import { migrateToLatest } from "../../store/migrate.js";
import { defineOperation } from "../define.js";

export const setup = defineOperation({
  name: "setup",
  summary: "Create the data directories, migrate the SQL schema and create the column-store database",
  mutates: true,
  access: "admin",
  mcp: false,
  usesColumnStore: true,
  input: z.object({}),
  output: SetupResult,
  cli: { command: "setup", examples: ["jobhouse setup"], confirm: (r: { migrations_applied: string[] }) => `Ready (${r.migrations_applied.length} migration(s) applied)` },
  async handler(_input, { config, db, columns, migratedOnOpen = [] }) {
    await makeFolder(config.home, "SERVICE_HOME");
    await makeFolder(config.logDir, "SERVICE_LOG_DIR");
    const applied = [...migratedOnOpen, ...(await migrateToLatest(db))];
    // The one place besides server start and migrate that makes the ClickHouse database; the
    // service's own handle only finds it (data/client.ts openColumnStore).
    if (config.ch.engine === "server") await (await openColumnStore(config.ch, { create: true })).close();
    const store = await columns();
    return {
      home: config.home,
      sql: config.sql.dialect === "sqlite" ? `sqlite:${config.sql.location}` : "postgres",
      column_store: `${store.engine}:${store.database}`,
      migrations_applied: applied,
    };
  },
});

/** A folder the service needs; a file in its place is one line naming the variable, not EEXIST. */
async function makeFolder(path: string, variable: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR") throw new ConfigError(`${variable} (${path}) must be a folder, and a file is in its place`);
    if (code === "EACCES" || code === "EROFS") throw new ConfigError(`${variable} (${path}) cannot be created: ${code === "EACCES" ? "permission denied" : "read-only file system"}`);
    throw error;
  }
}
