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
