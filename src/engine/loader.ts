// Loading job modules and resolving entrypoints to job and task definitions (CONTRACT §4).
// A job never fails later because of a typo: register_job and run_job resolve here first.

import { existsSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { invalid } from "../core/errors.js";
import { BUILTIN_MODULE, builtinTasks } from "./builtins.js";
import { type JobDefinition, type TaskDefinition, isJobDefinition, isTaskDefinition, taskRegistry } from "./definitions.js";
import { parseEntrypoint } from "./entrypoints.js";

const FILE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];

/** A path (relative to the working directory) rather than a package specifier such as "@acme/jobs". */
const looksLikeFile = (module: string) =>
  !module.startsWith("@") && (module.startsWith(".") || isAbsolute(module) || module.startsWith("file:") || module.includes("/") || /\.[A-Za-z0-9]+$/.test(module));

/** The URL a module specifier loads from; files are relative to the working directory. */
export function moduleUrl(module: string, cwd = process.cwd()): string {
  if (!looksLikeFile(module)) return module;
  if (module.startsWith("file:")) return module;
  const path = resolve(cwd, module);
  if (!existsSync(path) || !statSync(path).isFile()) throw invalid(`module file "${module}" does not exist (looked in ${cwd})`);
  if (!FILE_EXTENSIONS.some((ext) => path.endsWith(ext))) throw invalid(`module "${module}" must be a .ts, .mts, .js or .mjs file`);
  return pathToFileURL(path).href;
}

/** How a module is written in stored entrypoints: relative to the working directory when inside it. */
export function displayModule(url: string, cwd = process.cwd()): string {
  if (!url.startsWith("file:")) return url;
  const path = fileURLToPath(url);
  const rel = relative(cwd, path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

/**
 * Loaded modules by specifier. Node caches modules itself, but every `import()` still runs the
 * resolve hooks on the loader thread: at thousands of tasks per second that round trip dominates.
 */
const loaded = new Map<string, LoadedModule>();

interface LoadedModule {
  url: string;
  exports: Record<string, unknown>;
}

async function importModule(module: string): Promise<LoadedModule> {
  const cached = loaded.get(module);
  if (cached) return cached;
  const url = moduleUrl(module);
  try {
    const entry = { url, exports: (await import(url)) as Record<string, unknown> };
    loaded.set(module, entry);
    return entry;
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    throw invalid(`module "${module}" failed to load: ${message.split("\n")[0]}`);
  }
}

/** Resolves a job entrypoint `<module>:<export>` (register_job, run_job, a job's entry task). */
export async function resolveJob(entrypoint: string): Promise<JobDefinition> {
  const { module, exportName } = parseEntrypoint(entrypoint);
  const exported = (await importModule(module)).exports[exportName];
  if (isJobDefinition(exported)) return exported;
  if (exported === undefined) throw invalid(`module "${module}" has no export "${exportName}"`);
  if (isTaskDefinition(exported)) throw invalid(`"${entrypoint}" is a task, not a job: define the job with job() from "jobhouse"`);
  throw invalid(`export "${exportName}" of "${module}" is not a job: define it with job() from "jobhouse"`);
}

/**
 * Resolves a task entrypoint `<module>:<task name>`: the name given to task(), which need not be
 * the export's name; an export of that name that is a task is accepted too.
 */
export async function resolveTask(entrypoint: string): Promise<TaskDefinition> {
  const { module, exportName: name } = parseEntrypoint(entrypoint);
  if (module === BUILTIN_MODULE) {
    const builtin = builtinTasks.get(name);
    if (!builtin) throw invalid(`"${name}" is not a built-in task`);
    return builtin;
  }
  const { url, exports } = await importModule(module);
  const registered = taskRegistry.get(`${url}#${name}`);
  if (registered) return registered;
  if (isTaskDefinition(exports[name])) return exports[name];
  throw invalid(`module "${module}" defines no task named "${name}"`);
}

/** Validates kwargs against the job's schema, if it declares one; 422 names the bad field's path. */
export function validateKwargs(definition: JobDefinition, kwargs: Record<string, unknown>): Record<string, unknown> {
  const schema = definition.options.schema;
  if (!schema) return kwargs;
  const result = schema.safeParse(kwargs);
  if (result.success) return result.data as Record<string, unknown>;
  const issue = result.error.issues[0];
  const path = issue ? ["kwargs", ...issue.path.map(String)].join(".") : "kwargs";
  throw invalid(`${path}: ${issue?.message ?? "invalid"}`);
}
