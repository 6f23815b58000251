// Entry: one API client and one query cache for the page, then the app.

import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { API_TOKEN_KEY, REFRESH_TOKEN_KEY, createApiClient } from "./api/client.js";
import { createQueryClient } from "./api/queries.js";
import { indexedDbToken } from "./api/shared-token.js";
import { App } from "./app.js";
import "./styles.css";

const shared = indexedDbToken();
const client = createApiClient({
  fetch: window.fetch.bind(window),
  storage: window.localStorage,
  // Tabs of one origin share the refresh token; a refresh token is single-use, so they take turns.
  ...(navigator.locks ? { exclusive: <T,>(fn: () => Promise<T>) => navigator.locks.request("jobhouse-refresh", fn) as Promise<T> } : {}),
  ...(shared ? { shared } : {}),
});

// Sign-out is per browser, not per tab: when another tab removes the stored credential (its Sign
// out, or a session that ended there), this one signs out too. The storage event fires in the other
// tabs of the origin only, and a rotation sets the key, it never removes it.
window.addEventListener("storage", (event) => {
  const removed = event.key === null || ((event.key === REFRESH_TOKEN_KEY || event.key === API_TOKEN_KEY) && event.newValue === null);
  if (removed) client.signedOutElsewhere();
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <App client={client} />
    </QueryClientProvider>
  </StrictMode>,
);
