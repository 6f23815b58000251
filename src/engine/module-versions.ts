// The version of a job module as it is on disk: its file and the local files it imports
// (relative specifiers, followed recursively), hashed. A thread records the version of each module
// it loads and re-checks the files' size and mtime at most every CHECK_MS; when one changed, the
// module it holds is stale, and since an ES module cannot be unloaded, the thread must be replaced
// (the runner and the inspector do that and try again on a fresh thread).

import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** How stale a module may be before a change is noticed: a run started later loads the new file. */
export const CHECK_MS = 250;
/** A module graph larger than this is hashed as far as it goes (its entry file always). */
const MAX_FILES = 500;

export interface ModuleVersion {
  /** sha256 of the graph's files (paths and contents), 16 hex digits. */
  version: string;
  files: { path: string; mtimeMs: number; size: number }[];
  checkedAt: number;
}

const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"'\n]+)["']/g;
const EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];

/** The file a relative specifier names: as written, or a TypeScript source behind a `.js` name. */
function resolveLocal(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|m?ts)$/, "");
  for (const candidate of [base, ...EXTENSIONS.map((ext) => stem + ext)]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/** The version of the module at `url` (a file: URL) now; packages (non-file URLs) have none. */
export function readModuleVersion(url: string, nowMs: number): ModuleVersion | null {
  if (!url.startsWith("file:")) return null;
  const hash = createHash("sha256");
  const files: ModuleVersion["files"] = [];
  const seen = new Set<string>();
  const queue = [fileURLToPath(url)];
  while (queue.length > 0 && files.length < MAX_FILES) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    let text: string;
    let stat;
    try {
      stat = statSync(path);
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    files.push({ path, mtimeMs: stat.mtimeMs, size: stat.size });
    hash.update(path).update("\0").update(text).update("\0");
    for (const match of text.matchAll(LOCAL_IMPORT)) {
      const next = resolveLocal(path, match[1]!);
      if (next && !seen.has(next) && !next.includes("/node_modules/")) queue.push(next);
    }
  }
  return { version: hash.digest("hex").slice(0, 16), files, checkedAt: nowMs };
}

/**
 * False when a file of the graph changed since `version` was read. Checked at most every CHECK_MS
 * unless `force` (a run started with another version, or a register/run check).
 */
export function isCurrent(version: ModuleVersion, nowMs: number, force = false): boolean {
  if (!force && nowMs - version.checkedAt < CHECK_MS) return true;
  for (const file of version.files) {
    try {
      const stat = statSync(file.path);
      if (stat.mtimeMs !== file.mtimeMs || stat.size !== file.size) return false;
    } catch {
      return false;
    }
  }
  version.checkedAt = nowMs;
  return true;
}
