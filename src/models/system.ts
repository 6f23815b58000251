// Health, setup and identity wire models.

import { z } from "zod";

export const HealthView = z.object({
  status: z.literal("ok"),
  mode: z.enum(["local", "distributed"]),
  version: z.string(),
  time: z.string(),
  auth: z
    .enum(["none", "token", "users"])
    .describe("What /api/v0 asks of a caller: nothing, the shared API token (Scheme A) or a user's access token (Scheme B)"),
});

export type HealthView = z.infer<typeof HealthView>;

const StoreCheck = z.object({
  ok: z.boolean(),
  ms: z.number().describe("How long the check took"),
});

/** GET /ready: both stores answered (a store that did not is a 503 Problem naming it). */
export const ReadyView = z.object({
  status: z.literal("ready"),
  checks: z.object({ sql: StoreCheck, column_store: StoreCheck }),
});

export type ReadyView = z.infer<typeof ReadyView>;

export const SetupResult = z.object({
  home: z.string(),
  sql: z.string(),
  column_store: z.string(),
  migrations_applied: z.array(z.string()),
});

export const Role = z.enum(["admin", "viewer"]);
export type Role = z.infer<typeof Role>;

export const MeView = z.object({ id: z.string(), username: z.string(), role: Role });
export type MeView = z.infer<typeof MeView>;
