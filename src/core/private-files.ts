// The service's files are its owner's alone (issue: private files): the home, the SQLite store,
// chDB's folder, task logs and server.json are created 0700 (folders) / 0600 (files).

import { chmodSync, existsSync, mkdirSync } from "node:fs";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Files made by libraries inside this process (SQLite's -wal and -shm, chDB's parts) get the mode
 * the process's umask allows: 0077 keeps every one of them private without chasing each file.
 */
export function keepNewFilesPrivate(): void {
  process.umask(0o077);
}

/** A folder (and any missing parents) created 0700. An existing folder is left as its owner made it. */
export function makePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Narrows files that exist to 0600 (a file may predate this process, or a looser umask). */
export function makeFilesPrivate(...paths: string[]): void {
  for (const path of paths) if (existsSync(path)) chmodSync(path, PRIVATE_FILE_MODE);
}
