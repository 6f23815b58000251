// The data plane of the task running on this async path, as the engine tells it: objects are what
// task code calls and never import the engine, so the engine (engine/execution.ts, which knows the
// attempt) installs the lookup here when it loads.

import type { DataPlane } from "./data-plane.js";

let lookup: () => DataPlane | undefined = () => undefined;

export function providePlane(find: () => DataPlane | undefined): void {
  lookup = find;
}

export const currentPlane = (): DataPlane | undefined => lookup();
