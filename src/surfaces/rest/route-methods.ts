// Which methods a path answers to, for a 405 with its Allow header instead of a 404 when the path
// exists under another method (RFC 9110 §15.5.6). Fastify's router knows routes by method only, so
// the patterns are collected as routes are added and matched here.

import type { FastifyInstance } from "fastify";

export interface RouteMethods {
  /** The methods some route answers at this concrete path; empty when none does. */
  allowedAt(path: string): string[];
}

/** `/api/v0/jobs/:ref` → a RegExp; `::` is a literal colon (find-my-way's escape), `*` anything. */
function patternOf(url: string): RegExp {
  const source = url
    .split("/")
    .map((segment) =>
      segment.startsWith(":")
        ? "[^/]+"
        : segment === "*"
          ? ".*"
          : segment
              .split("::")
              .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+"))
              .join(":"),
    )
    .join("/");
  return new RegExp(`^${source}$`);
}

/** Call before any route is added. */
export function collectRouteMethods(app: FastifyInstance): RouteMethods {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    // The static files' catch-all is not a resource of the API.
    if (route.url.endsWith("*")) return;
    // A route may say it answers fewer methods than reach its handler (/mcp refuses GET itself).
    const declared = (route.config as { allow?: string[] } | undefined)?.allow;
    const methods = declared ?? (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    routes.push({ pattern: patternOf(route.url), methods });
  });
  return {
    allowedAt(path) {
      const allowed = new Set<string>();
      for (const route of routes) if (route.pattern.test(path)) route.methods.forEach((m) => allowed.add(m));
      return [...allowed].sort();
    },
  };
}
