// JSON keys that could reach an object's prototype: `__proto__`, and `constructor` holding
// `prototype`. JSON.parse makes them own fields, but the next copy by assignment (a schema's parse,
// Object.assign) sets the copy's prototype instead: the field was dropped in silence. REST refuses
// them when it parses (fastify's check); MCP and the CLI's JSON options look with this.

export const PROTOTYPE_KEY_MESSAGE = 'a key "__proto__", or "constructor" holding "prototype", is refused (it could reach an object\'s prototype)';

/** Whether a parsed JSON value holds such a key at any depth. */
export function hasPrototypeKey(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(hasPrototypeKey);
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (key === "__proto__") return true;
    if (key === "constructor" && field !== null && typeof field === "object" && Object.hasOwn(field, "prototype")) return true;
    if (hasPrototypeKey(field)) return true;
  }
  return false;
}
