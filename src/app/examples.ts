// The example pipelines that `local start` registers on a fresh home, so the dashboard is never
// empty (examples/ in this package: an ETL, a fan-out/fan-in computation, a scheduled job).

import { pathToFileURL } from "node:url";
import { isServiceError } from "../core/errors.js";
import { displayModule } from "../engine/loader.js";
import { SYNTHETIC_ADMIN, invoke, operationByName } from "../operations/index.js";
import type { OpenedService } from "./context.js";
import { PACKAGE_ROOT } from "./version.js";

interface Example {
  file: string;
  exportName: string;
  schedule?: string;
  defaults?: Record<string, unknown>;
}

const EXAMPLES: Example[] = [
  { file: "examples/sales.ts", exportName: "salesPipeline" },
  { file: "examples/primes.ts", exportName: "countPrimes", defaults: { limit: 200_000, chunks: 8 } },
  { file: "examples/heartbeat.ts", exportName: "hostHeartbeat", schedule: "*/5 * * * *" },
];

/** Registers the examples; one that is already registered (or fails to load) is left alone. */
export async function registerExamples(service: OpenedService): Promise<string[]> {
  const registered: string[] = [];
  for (const example of EXAMPLES) {
    const module = displayModule(pathToFileURL(new URL(example.file, PACKAGE_ROOT).pathname).href);
    try {
      const view = (await invoke(
        operationByName.get("register_job")!,
        { entrypoint: `${module}:${example.exportName}`, schedule: example.schedule ?? null, defaults: example.defaults ?? {} },
        { ...service, principal: SYNTHETIC_ADMIN },
      )) as { name: string };
      registered.push(view.name);
    } catch (error) {
      if (!isServiceError(error)) throw error;
      service.log.warn(`example ${example.file} was not registered: ${error.detail}`);
    }
  }
  return registered;
}
