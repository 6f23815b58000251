// $SERVICE_HOME/server.json records where a running local server listens (CONTRACT §7), so CLI
// commands that need chDB (locked by the server process) can reach it over loopback.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE, makeFilesPrivate } from "../core/private-files.js";

export interface ServerRecord {
  url: string;
  pid: number;
  /**
   * A per-start secret the CLI presents to its own local server, so commands sent over loopback
   * never cross HTTP authentication (SPEC). The file is readable by its owner only.
   */
  secret?: string;
}

const serverFilePath = (home: string) => join(home, "server.json");

export function writeServerRecord(home: string, record: ServerRecord): void {
  const path = serverFilePath(home);
  writeFileSync(path, JSON.stringify(record) + "\n", { mode: PRIVATE_FILE_MODE });
  // `mode` applies only when the file is created: one left by an earlier start keeps its own.
  makeFilesPrivate(path);
}

/** The running server's record, or null when there is none or its process is gone. */
export function readLiveServer(home: string): ServerRecord | null {
  let record: ServerRecord;
  try {
    record = JSON.parse(readFileSync(serverFilePath(home), "utf8")) as ServerRecord;
  } catch {
    return null;
  }
  if (typeof record.url !== "string" || !Number.isInteger(record.pid)) return null;
  try {
    process.kill(record.pid, 0);
    return record;
  } catch (error) {
    // EPERM: alive but not ours to signal; anything else: gone.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? record : null;
  }
}

/** Removes the record only if it is this process's own. */
export function removeServerRecord(home: string, pid: number): void {
  try {
    const record = JSON.parse(readFileSync(serverFilePath(home), "utf8")) as ServerRecord;
    if (record.pid === pid) rmSync(serverFilePath(home), { force: true });
  } catch {
    // Nothing to remove.
  }
}
