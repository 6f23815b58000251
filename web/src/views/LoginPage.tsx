// ?p=login: sign in with a username and password (Scheme B) or with the server's API token
// (Scheme A with SERVICE_API_TOKEN set); then back to the view that asked (`next`).

import { useState } from "react";
import { ApiError, type ApiClient } from "../api/client.js";
import { Link } from "../components/Link.js";
import { hrefFor, navigate } from "../lib/route.js";
import { safeNext } from "./safe-next.js";

export function LoginPage({ client, next }: { client: ApiClient; next: string | null }) {
  const scheme = client.scheme();
  const [username, setUsername] = useState("");
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (scheme === "none") {
    return (
      <section className="login">
        <h1>Sign in</h1>
        <p>This server asks for no sign-in.</p>
        <p>
          <Link href={hrefFor("jobs")}>Go to the jobs</Link>
        </p>
      </section>
    );
  }

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (scheme === "users") await client.login(username.trim(), secret);
      else await client.useApiToken(secret.trim());
      navigate(safeNext(next), { replace: true });
    } catch (caught) {
      const problem = caught instanceof ApiError ? caught : null;
      setError(
        problem?.status === 401
          ? scheme === "users"
            ? "Wrong username or password."
            : "The server did not accept this token."
          : problem?.status === 429
            ? "Too many failed attempts for this user: wait a few minutes and try again."
            : (problem?.detail ?? "Signing in failed."),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="login">
      <h1>Sign in</h1>
      {client.sessionEnded() && error === null ? <p role="status">Your session has ended (it expired or was revoked): sign in again.</p> : null}
      <form onSubmit={submit} aria-describedby={error ? "login-error" : undefined}>
        {scheme === "users" ? (
          <>
            <label htmlFor="login-username">Username</label>
            <input id="login-username" name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} autoFocus />
            <label htmlFor="login-password">Password</label>
            <input id="login-password" name="password" type="password" autoComplete="current-password" required value={secret} onChange={(e) => setSecret(e.target.value)} />
          </>
        ) : (
          <>
            <label htmlFor="login-token">API token</label>
            <input id="login-token" name="token" type="password" autoComplete="off" required value={secret} onChange={(e) => setSecret(e.target.value)} autoFocus />
            <p className="muted">The value of SERVICE_API_TOKEN on the server.</p>
          </>
        )}
        {error ? (
          <p id="login-error" className="inline-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </section>
  );
}
