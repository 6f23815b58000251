// Loading, empty and error states: every view says what is happening instead of showing a blank.

import type { ReactNode } from "react";
import type { ApiError } from "../api/client.js";
import { isPermanent } from "../api/queries.js";

export function Loading({ what }: { what: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state empty">
      <p className="state-title">{title}</p>
      {children ? <div className="state-hint">{children}</div> : null}
    </div>
  );
}

export function ErrorState({ error, what }: { error: ApiError; what: string }) {
  const notFound = error.status === 404;
  return (
    <div className="state error" role="alert">
      <p className="state-title">{notFound ? `No such ${what}` : `Could not load ${what}`}</p>
      <p className="state-hint">
        {error.detail}
        {error.status > 0 ? <span className="muted"> ({error.status} {error.code})</span> : null}
      </p>
      {isPermanent(error) ? null : <p className="state-hint muted">Retrying every 2 seconds.</p>}
    </div>
  );
}

/** A view whose one resource could not be loaded (no such job, a refused read): still headed by the view's name. */
export function ViewError({ title, error, what }: { title: string; error: ApiError; what: string }) {
  return (
    <section>
      <h1>{title}</h1>
      <ErrorState error={error} what={what} />
    </section>
  );
}

/** A failed mutation, shown next to the control that made it. */
export function MutationError({ error }: { error: ApiError | null }) {
  if (error === null) return null;
  return (
    <p className="inline-error" role="alert">
      {error.detail} <span className="muted">({error.code})</span>
    </p>
  );
}
