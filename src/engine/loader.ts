// Loading job modules and resolving entrypoints to job and task definitions (CONTRACT §4).
// A job never fails later because of a typo: register_job and run_job resolve here first.

import { existsSync, realpathSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { conflict, invalid } from "../core/errors.js";
import { BUILTIN_MODULE, builtinTasks } from "./builtins.js";
import { type JobDefinition, type TaskDefinition, isJobDefinition, isTaskDefinition, taskRegistry } from "./definitions.js";
import { parseEntrypoint } from "./entrypoints.js";
import { type ModuleVersion, isCurrent, readModuleVersion } from "./module-versions.js";
import { closedObjectFields } from "./kwargs-schema.js";

const FILE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];

/** This installation's examples: always runnable, wherever the server was started. */
const EXAMPLES_ROOT = fileURLToPath(new URL("../../examples/", import.meta.url));
/** Examples are written `examples/<file>`, relative to this package, when no job root holds them. */
const EXAMPLES_PREFIX = "examples/";

/**
 * Where entrypoint modules may come from (CONTRACT §4, issue "confined entrypoints"): files under
 * the job roots (the working directory, or SERVICE_JOBS_PATH) and packages SERVICE_JOBS_PACKAGES
 * names. Nothing else is ever imported: a request cannot make the server run arbitrary files.
 */
let jobRoots: string[] = [process.cwd()];
let jobPackages: string[] = [];

export function configureJobRoots(roots: readonly string[], packages: readonly string[]): void {
  jobRoots = [...roots];
  jobPackages = [...packages];
}

/** The real path of a root (symlinks resolved), or null when it does not exist. */
function realRoot(root: string): string | null {
  try {
    return realpathSync(root);
  } catch {
    return null;
  }
}

const insideOf = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/** A path (relative to a job root) rather than a package specifier such as "@acme/jobs". */
const looksLikeFile = (module: string) =>
  !module.startsWith("@") && (module.startsWith(".") || isAbsolute(module) || module.includes("/") || /\.[A-Za-z0-9]+$/.test(module));

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

const ROOTS_RULE = "entrypoint modules must be files under the job roots (the working directory, or SERVICE_JOBS_PATH)";

/**
 * The URL a module specifier loads from, after the confinement rules; refusals name the rule, not
 * our paths, and are plain 422 `invalid` (SPEC Errors, CONTRACT §4): the detail says which rule.
 */
export function moduleUrl(module: string): string {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(module)) {
    throw invalid(`module "${module}" is refused: URLs and node: builtins are not entrypoints; ${ROOTS_RULE}`);
  }
  if (!looksLikeFile(module)) {
    if (isBuiltin(module)) throw invalid(`module "${module}" is refused: Node's builtins are not entrypoints`);
    if (!jobPackages.includes(packageOf(module))) {
      throw invalid(`module "${module}" is refused: package "${packageOf(module)}" is not named in SERVICE_JOBS_PACKAGES`);
    }
    return module;
  }
  const roots = [...jobRoots, EXAMPLES_ROOT].map(realRoot).filter((root): root is string => root !== null);
  const candidates = isAbsolute(module) ? [module] : jobRoots.map((root) => resolve(root, module));
  if (module.startsWith(EXAMPLES_PREFIX)) candidates.push(resolve(EXAMPLES_ROOT, module.slice(EXAMPLES_PREFIX.length)));
  // A path outside every root is refused before anything looks at it: whether it existed told a
  // caller which files the server has (/etc/passwd refused, /etc/nonexist "does not exist").
  const spelledRoots = [...jobRoots, EXAMPLES_ROOT].map((root) => resolve(root)).concat(roots);
  const inside = candidates.filter((candidate) => spelledRoots.some((root) => insideOf(root, candidate)));
  if (inside.length === 0) throw invalid(`module "${module}" is refused: ${ROOTS_RULE}`);
  for (const candidate of inside) {
    if (!existsSync(candidate)) continue;
    // Symlinks and `..` are resolved before the check: the file itself must live under a root.
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch {
      continue; // gone, or unreadable, since it was seen: not there (a raw ENOENT named our paths)
    }
    // The innermost root that holds it: an installed package's examples lie in the project's
    // node_modules, under the working directory too, and were refused as an installed package's.
    const root = roots.filter((r) => insideOf(r, real)).sort((a, b) => b.length - a.length)[0];
    if (!root) throw invalid(`module "${module}" is refused: ${ROOTS_RULE}`);
    if (relative(root, real).split(sep).includes("node_modules")) {
      throw invalid(`module "${module}" is refused: files of installed packages are not entrypoints unless SERVICE_JOBS_PACKAGES names the package`);
    }
    if (!statSync(real).isFile()) throw invalid(`module "${module}" is not a file`);
    if (!FILE_EXTENSIONS.some((ext) => real.endsWith(ext))) throw invalid(`module "${module}" must be a .ts, .mts, .js or .mjs file`);
    return pathToFileURL(real).href;
  }
  // Where relative paths are read from, without naming our folders (docs/SECURITY.md): a user in
  // another directory than the server's took "does not exist" for a wrong name.
  throw invalid(
    `module file "${module}" does not exist under this machine's job roots` +
      (isAbsolute(module)
        ? ""
        : ": a relative path is read from each job root (the folders of SERVICE_JOBS_PATH when it is set, otherwise the directory the process was started in: the server's, a worker's, or that of a CLI running the job itself), not from where a request comes"),
  );
}

/**
 * How a module is written in stored entrypoints, so that moduleUrl finds it again in any process of
 * the deployment: relative to the first job root that holds it (a worker started in `/` with
 * SERVICE_JOBS_PATH set stored paths relative to `/`, which no root resolved), `examples/<file>` for
 * this package's examples, else absolute.
 */
export function displayModule(url: string): string {
  if (!url.startsWith("file:")) return url;
  const path = fileURLToPath(url);
  // The examples first: installed, they lie under the working directory's node_modules too.
  const examples = realRoot(EXAMPLES_ROOT);
  if (examples !== null && insideOf(examples, path)) return EXAMPLES_PREFIX + relative(examples, path).split(sep).join("/");
  for (const root of jobRoots) {
    const real = realRoot(root);
    if (real !== null && insideOf(real, path)) return relative(real, path);
  }
  return path;
}

/**
 * Loaded modules by specifier. Node caches modules itself, but every `import()` still runs the
 * resolve hooks on the loader thread: at thousands of tasks per second that round trip dominates.
 */
const loaded = new Map<string, LoadedModule>();

interface LoadedModule {
  url: string;
  exports: Record<string, unknown>;
  /** The files as they were loaded; null for a package. */
  version: ModuleVersion | null;
}

/** The module this thread loaded has changed on disk: only a fresh thread can load the new one. */
export const MODULE_CHANGED = "module_changed";

/** Modules this thread has tried to import (a refused check after one leaves module state behind). */
let importsTried = 0;
export const importsAttempted = (): number => importsTried;

/**
 * What a caller knows of the module's version: `expected`, the version its run started with (a
 * thread holding another re-checks the files now); `force`, check the files now whatever the time.
 */
export interface VersionCheck {
  expected?: string | null;
  force?: boolean;
}

async function importModule(module: string, check: VersionCheck = {}): Promise<LoadedModule> {
  const cached = loaded.get(module);
  if (cached) {
    // A run that started with the version this thread holds gets it, whatever the disk says now.
    // Otherwise the files are checked: at once for a run expecting another version or a forced
    // check, at most every CHECK_MS for the rest.
    if (cached.version && cached.version.version !== check.expected) {
      const force = check.force === true || check.expected != null;
      if (!isCurrent(cached.version, Date.now(), force)) throw conflict(`module "${module}" changed on disk since this thread loaded it`, MODULE_CHANGED);
    }
    return cached;
  }
  const url = moduleUrl(module);
  importsTried += 1;
  try {
    // Read before importing: a change during the import is then seen at the next check.
    const version = readModuleVersion(url, Date.now());
    const entry = { url, exports: (await import(url)) as Record<string, unknown>, version };
    loaded.set(module, entry);
    return entry;
  } catch (error) {
    throw invalid(`module "${module}" failed to load: ${loadFailure(error, module, url)}`);
  }
}

/**
 * What went wrong, in one line: a syntax error's own words and place come on the lines after
 * "Transform failed with 1 error:", which alone told an author nothing. The module's path is
 * written as the author gave it.
 */
function loadFailure(error: unknown, module: string, url: string): string {
  const message = (error as Error)?.message ?? String(error);
  const lines = message.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  let text = (/:$/.test(lines[0] ?? "") ? lines.slice(0, 3) : lines.slice(0, 1)).join(" ").split(fileURLToPath(url)).join(module);
  if (text.length > 500) text = `${text.slice(0, 500)}…`;
  // Node 20 loads a .js file outside a "type": "module" folder as CommonJS, which cannot import.
  if (/Cannot require\(\) ES Module|require\(\) of ES Module|Cannot use import statement outside a module/.test(message)) {
    text += ` (a .js job file needs "type": "module" in its folder's package.json, or the .mjs or .ts extension)`;
  }
  return text;
}

/** The version of the module behind an entrypoint, as this thread loaded it (null: a package or a built-in). */
export function loadedVersion(entrypoint: string): string | null {
  return loaded.get(parseEntrypoint(entrypoint).module)?.version?.version ?? null;
}

/** Resolves a job entrypoint `<module>:<export>` (register_job, run_job, a job's entry task). */
export async function resolveJob(entrypoint: string, check: VersionCheck = {}): Promise<JobDefinition> {
  const { module, exportName } = parseEntrypoint(entrypoint);
  const exported = (await importModule(module, check)).exports[exportName];
  if (isJobDefinition(exported)) return exported;
  if (exported === undefined) throw invalid(`module "${module}" has no export "${exportName}"`);
  if (isTaskDefinition(exported)) throw invalid(`"${entrypoint}" is a task, not a job: define the job with job() from "jobhouse"`);
  throw invalid(`export "${exportName}" of "${module}" is not a job: define it with job() from "jobhouse"`);
}

/**
 * Resolves a task entrypoint `<module>:<task name>`: the name given to task(), which need not be
 * the export's name; an export of that name that is a task is accepted too.
 */
export async function resolveTask(entrypoint: string, check: VersionCheck = {}): Promise<TaskDefinition> {
  const { module, exportName: name } = parseEntrypoint(entrypoint);
  if (module === BUILTIN_MODULE) {
    const builtin = builtinTasks.get(name);
    if (!builtin) throw invalid(`"${name}" is not a built-in task`);
    return builtin;
  }
  const { url, exports } = await importModule(module, check);
  const registered = taskRegistry.get(`${url}#${name}`);
  if (registered) return registered;
  if (isTaskDefinition(exports[name])) return exports[name];
  throw invalid(`module "${module}" defines no task named "${name}"`);
}

/**
 * A field a `z.object` schema does not name is refused, though zod's default would drop it: an
 * agent's typo (`limt` for `limit`) ran with the default in silence. A schema that says what to do
 * with other keys (`.passthrough()`, `.catchall()`, `.strict()`) decides for itself.
 */
function refuseUnknownFields(schema: unknown, kwargs: Record<string, unknown>, field: string): void {
  const known = closedObjectFields(schema);
  if (known === null) return;
  const unknown = Object.keys(kwargs).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw invalid(`${field}: unknown field(s) ${unknown.join(", ")}; the job takes ${known.length > 0 ? known.join(", ") : "no fields"}`);
  }
}

/**
 * Validates kwargs against the job's schema, if it declares one; the 422 names every bad field by
 * its path. `partial` checks a registration's defaults: fields they leave out may come with each
 * run, so only the fields they give are judged (and they are returned as given).
 */
export function validateKwargs(definition: JobDefinition, kwargs: Record<string, unknown>, partial = false, field = "kwargs"): Record<string, unknown> {
  const schema = definition.options.schema;
  if (!schema) return kwargs;
  refuseUnknownFields(schema, kwargs, field);
  const result = schema.safeParse(kwargs);
  if (result.success) return partial ? kwargs : (result.data as Record<string, unknown>);
  // Partial: an issue about a field the defaults give, or about keys they give that the schema
  // does not know (a strict schema's top-level issue, whose keys all come from the defaults).
  const judged = (i: { path: readonly PropertyKey[]; code?: string }) => (i.path.length > 0 ? Object.hasOwn(kwargs, String(i.path[0])) : i.code === "unrecognized_keys");
  const issues = partial ? result.error.issues.filter(judged) : result.error.issues;
  if (issues.length === 0) return kwargs;
  throw invalid(issues.map((issue) => `${[field, ...issue.path.map(String)].join(".")}: ${issue.message}`).join("; "));
}
