// REST addresses of operations: the API's prefix, declared once, and the one reading of path
// templates (`/jobs/:ref/stats`: a `:name` segment is a parameter; `/jobs:run` has none).

import type { HttpBinding } from "./define.js";

export const API_PREFIX = "/api/v0";

const PARAMETER = /\/:([A-Za-z_]+)/g;

/** The parameters a template names, in order. */
export const pathParams = (template: string): string[] => [...template.matchAll(PARAMETER)].map((m) => m[1]!);

/** The template with each parameter replaced by `fill(name)`. */
export const fillPath = (template: string, fill: (name: string) => string): string =>
  template.replace(PARAMETER, (_whole, name: string) => `/${fill(name)}`);

/** Where an operation is mounted: under the API's prefix unless absolute (GET /health). */
export const mountedPath = (http: Pick<HttpBinding, "path" | "absolute">): string => (http.absolute ? http.path : API_PREFIX + http.path);
