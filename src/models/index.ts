// The wire models, one import for surfaces and the web app.
export * from "./common.js";
export * from "./jobs.js";
export * from "./tasks.js";
export * from "./workers.js";
export * from "./objects.js";
export * from "./system.js";
export * from "./auth.js";
