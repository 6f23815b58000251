// Module resolution hook: the specifier "jobhouse" always means this installation's SDK, so a job
// file in any folder imports it without installing anything there; and a job file is an ES module
// wherever it lives (outside a "type": "module" package a .ts file would otherwise load as CommonJS,
// which cannot import the SDK).
import { treeModule } from "./source-tree.mjs";

const SDK_URL = treeModule("sdk/index");

export async function resolve(specifier, context, nextResolve) {
  // Handed on (not short-circuited) so the TypeScript loader resolves and compiles the SDK file.
  if (specifier === "jobhouse") return nextResolve(SDK_URL, context);
  const resolved = await nextResolve(specifier, context);
  if (/\.ts$/.test(resolved.url) && resolved.url.startsWith("file:") && resolved.format === "commonjs") {
    return { ...resolved, format: "module" };
  }
  return resolved;
}
