// login, refresh_token, logout: Scheme B's session operations (SPEC "Authentication and users").
// Public: the credential is in the body, not in a bearer header.

import { z } from "zod";
import { LoginRequest, LogoutRequest, RefreshRequest, TokenPair } from "../../models/auth.js";
import { defineOperation } from "../define.js";
import { login as startSession, logout as endSession, refresh } from "./sessions.js";

export const login = defineOperation({
  name: "login",
  summary: "Exchange a username and password for an access token and a refresh token",
  description: "401 for an unknown user, a wrong password or a disabled user alike; after 10 failures for one username within 15 minutes, 429 with Retry-After",
  mutates: true,
  access: "public",
  mcp: false,
  input: LoginRequest,
  output: TokenPair,
  http: { method: "POST", path: "/auth/login", errors: [401, 429, 503], conflicts: false },
  async handler({ username, password }, ctx) {
    return startSession(ctx, username, password);
  },
});

export const refreshToken = defineOperation({
  name: "refresh_token",
  summary: "Exchange a refresh token for a new pair (the old one is used up; presenting it again revokes the login)",
  mutates: true,
  access: "public",
  mcp: false,
  input: RefreshRequest,
  output: TokenPair,
  http: { method: "POST", path: "/auth/refresh", errors: [401], conflicts: false },
  async handler({ refresh_token }, ctx) {
    return refresh(ctx, refresh_token);
  },
});

export const logout = defineOperation({
  name: "logout",
  summary: "Revoke a refresh token and the login it belongs to",
  mutates: true,
  access: "public",
  mcp: false,
  input: LogoutRequest,
  output: z.void(),
  http: { method: "POST", path: "/auth/logout", status: 204, conflicts: false },
  async handler({ refresh_token }, ctx) {
    await endSession(ctx, refresh_token);
  },
});
