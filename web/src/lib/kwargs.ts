// The run-now editor's check: a job's arguments are one JSON object (RunJobRequest.kwargs), so
// anything else is refused before it is sent, with where it went wrong.

export type KwargsCheck = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

export function parseKwargs(text: string): KwargsCheck {
  if (text.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `Not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, problem: `The arguments must be a JSON object ({"key": value}), not ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}.` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
