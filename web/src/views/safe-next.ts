// Where sign-in returns to: only a view of this app, never another origin (an open redirect).

import { hrefFor } from "../lib/route.js";

export function safeNext(next: string | null): string {
  return next !== null && next.startsWith("/?") ? next : hrefFor("jobs");
}
