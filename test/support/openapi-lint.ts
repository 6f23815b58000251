// Lints an OpenAPI document the way its readers' tools do: Redocly's `recommended` ruleset and
// Spectral's `spectral:oas`. Returns every error and warning as one line each (infos and hints
// are left out, as both tools' default failure thresholds do).

import { createConfig, lintFromString } from "@redocly/openapi-core";
// CommonJS packages: their named exports are reached through the default export.
import spectralCore from "@stoplight/spectral-core";
import spectralParsers from "@stoplight/spectral-parsers";
import spectralRulesets from "@stoplight/spectral-rulesets";

export async function redoclyFindings(document: unknown): Promise<string[]> {
  const config = await createConfig({ extends: ["recommended"] });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "/openapi.json", config });
  return problems
    .filter((p) => p.severity === "error" || p.severity === "warn")
    .map((p) => `redocly ${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`);
}

export async function spectralFindings(document: unknown): Promise<string[]> {
  const spectral = new spectralCore.Spectral();
  spectral.setRuleset({ extends: [[spectralRulesets.oas as never, "recommended"]] });
  const results = await spectral.run(new spectralCore.Document(JSON.stringify(document), spectralParsers.Json));
  // Severity: 0 error, 1 warning, 2 information, 3 hint.
  return results.filter((r) => r.severity <= 1).map((r) => `spectral ${r.severity === 0 ? "error" : "warn"} ${String(r.code)}: ${r.message} at ${r.path.join(".")}`);
}
