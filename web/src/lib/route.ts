// The app's location is its query string (SPEC: the view comes from `?p=`). Navigation pushes history
// entries, so back and forward work and every view has a link that survives a reload.

import { useSyncExternalStore } from "react";

export type ViewName = "jobs" | "job" | "task" | "workers" | "registered" | "objects" | "object" | "login";
export const VIEWS: readonly ViewName[] = ["jobs", "job", "task", "workers", "registered", "objects", "object", "login"];

export interface Route {
  view: ViewName | null;
  params: URLSearchParams;
}

export function parseRoute(search: string): Route {
  const params = new URLSearchParams(search);
  const p = params.get("p");
  if (p === null || p === "") return { view: "jobs", params };
  return { view: (VIEWS as readonly string[]).includes(p) ? (p as ViewName) : null, params };
}

export type Params = Record<string, string | number | boolean | null | undefined>;

/** The parameters that are set, as a query string without its `?`: null, undefined and "" are left out. */
export function searchOf(params: Params): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
  }
  return search.toString();
}

/** `?p=job&id=1`: the link to a view; empty parameters are left out. */
export function hrefFor(view: ViewName, params: Params = {}): string {
  return `/?${searchOf({ p: view, ...params })}`;
}

const CHANGE = "jobhouse:navigate";

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  window.dispatchEvent(new Event(CHANGE));
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(CHANGE, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(CHANGE, onChange);
  };
}

/** The current route; re-renders on navigation. */
export function useRoute(): Route {
  const search = useSyncExternalStore(subscribe, () => window.location.search);
  return parseRoute(search);
}

/**
 * A parameter of the address as a view's state (a list's filter, its page): it survives a reload and
 * travels with a shared link. Setting it replaces the history entry, so typing in a filter does not
 * fill the back button.
 */
export function useSearchParam(key: string): [string | null, (value: string | null) => void] {
  const { params } = useRoute();
  const set = (value: string | null) => {
    const next = new URLSearchParams(window.location.search);
    if (value === null || value === "") next.delete(key);
    else next.set(key, value);
    navigate(`/?${next.toString()}`, { replace: true });
  };
  return [params.get(key), set];
}
