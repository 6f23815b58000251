// Module resolution hook: the specifier "jobhouse" always means this installation's SDK, so a job
// file in any folder imports it without installing anything there.
const SDK_URL = new URL("../src/sdk/index.ts", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  // Handed on (not short-circuited) so the TypeScript loader resolves and compiles the SDK file.
  if (specifier === "jobhouse") return nextResolve(SDK_URL, context);
  return nextResolve(specifier, context);
}
