// Parsing of entrypoints `<module>:<export>` (CONTRACT §4).

import { invalid } from "../core/errors.js";

export interface Entrypoint {
  module: string;
  exportName: string;
}

const EXPORT_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Splits at the last colon: module paths may not contain one, export names never do. */
export function parseEntrypoint(text: string): Entrypoint {
  const at = text.lastIndexOf(":");
  const module = at > 0 ? text.slice(0, at).trim() : "";
  const exportName = at > 0 ? text.slice(at + 1).trim() : "";
  if (module === "" || !EXPORT_NAME.test(exportName)) {
    throw invalid(`entrypoint "${text}" must look like <module>:<export>, e.g. examples/sales.ts:salesPipeline`);
  }
  return { module, exportName };
}

export const isEntrypoint = (name: string): boolean => name.includes(":");
