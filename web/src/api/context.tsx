// The API client and the signed-in caller, shared with every view through React context.

import { createContext, useContext, type ReactNode } from "react";
import type { MeView } from "../../../src/models/index.js";
import type { ApiClient } from "./client.js";

export interface Session {
  client: ApiClient;
  me: MeView;
  mode: "local" | "distributed";
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ value, children }: { value: Session; children: ReactNode }) {
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error("useSession outside SessionProvider");
  return session;
}

/** Mutating controls are shown to admins only (SPEC: a viewer sees no control for a mutation). */
export function useIsAdmin(): boolean {
  return useSession().me.role === "admin";
}
