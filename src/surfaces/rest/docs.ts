// Interactive (Swagger UI) and reference (ReDoc) documentation, served from our own installed
// packages, never from a CDN.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { API_PREFIX } from "../../operations/index.js";

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve("swagger-ui-dist/package.json"));
const redocBundleDir = join(dirname(require.resolve("redoc/package.json")), "bundles");

const swaggerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jobhouse API</title>
<link rel="stylesheet" href="${API_PREFIX}/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="${API_PREFIX}/docs/assets/swagger-ui-bundle.js"></script>
<script src="${API_PREFIX}/docs/init.js"></script>
</body></html>`;

const swaggerInit = `window.ui = SwaggerUIBundle({ url: "${API_PREFIX}/openapi.json", dom_id: "#ui", deepLinking: true });`;

const redocPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jobhouse API reference</title></head>
<body><redoc spec-url="${API_PREFIX}/openapi.json"></redoc>
<script src="${API_PREFIX}/redoc/assets/redoc.standalone.js"></script>
</body></html>`;

// ReDoc draws its maker's logo from their CDN in the sidebar, with no option to turn it off: the
// bundle we serve carries an empty image in its place, so the page asks nothing of anyone else.
const REDOC_LOGO_URL = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";
let redocBundle: string | undefined;
const redocBundleText = () => (redocBundle ??= readFileSync(join(redocBundleDir, "redoc.standalone.js"), "utf8").replaceAll(REDOC_LOGO_URL, EMPTY_IMAGE));

/** The documentation pages load from this origin only (styles inline: both UIs set them at run time). */
const DOCS_CSP = ["default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:", "worker-src 'self' blob:", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"].join("; ");

export async function registerDocs(app: FastifyInstance, openapi: unknown): Promise<void> {
  app.get(`${API_PREFIX}/openapi.json`, async () => openapi);
  app.get(`${API_PREFIX}/docs`, async (_req, reply) => reply.header("content-security-policy", DOCS_CSP).type("text/html").send(swaggerPage));
  app.get(`${API_PREFIX}/docs/init.js`, async (_req, reply) => reply.type("application/javascript").send(swaggerInit));
  app.get(`${API_PREFIX}/redoc`, async (_req, reply) => reply.header("content-security-policy", DOCS_CSP).type("text/html").send(redocPage));
  app.get(`${API_PREFIX}/redoc/assets/redoc.standalone.js`, async (_req, reply) => reply.type("application/javascript; charset=utf-8").send(redocBundleText()));
  await app.register(fastifyStatic, { root: swaggerDir, prefix: `${API_PREFIX}/docs/assets/`, decorateReply: false, index: false });
  await app.register(fastifyStatic, { root: redocBundleDir, prefix: `${API_PREFIX}/redoc/assets/`, decorateReply: false, index: false });
}
