// The app shell: asks /health which sign-in the server wants, sends a caller without credentials to
// the login view, then shows the view the address names (`?p=`) under one navigation bar.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import type { HealthView, MeView } from "../../src/models/index.js";
import type { ApiClient } from "./api/client.js";
import { SessionProvider, type Session } from "./api/context.js";
import { type LiveState, startLiveUpdates } from "./api/live.js";
import { POLL_MS } from "./api/queries.js";
import { Link } from "./components/Link.js";
import { ErrorState, Loading } from "./components/States.js";
import { ThemeToggle } from "./components/ThemeToggle.js";
import { hrefFor, navigate, useRoute, type Route, type ViewName } from "./lib/route.js";
import { JobPage } from "./views/JobPage.js";
import { JobsPage } from "./views/JobsPage.js";
import { LoginPage } from "./views/LoginPage.js";
import { ObjectPage } from "./views/ObjectPage.js";
import { ObjectsPage } from "./views/ObjectsPage.js";
import { RegisteredPage } from "./views/RegisteredPage.js";
import { TaskPage } from "./views/TaskPage.js";
import { WorkersPage } from "./views/WorkersPage.js";
import { safeNext } from "./views/safe-next.js";

type Health = HealthView;

const TITLES: Record<ViewName, string> = {
  jobs: "Jobs",
  job: "Job",
  task: "Task",
  workers: "Workers",
  registered: "Registered jobs",
  objects: "Objects",
  object: "Object",
  login: "Sign in",
};

export function App({ client }: { client: ApiClient }) {
  const route = useRoute();
  const health = useQuery<Health>({
    queryKey: ["health"],
    queryFn: () => client.request<Health>("GET", "/health"),
    refetchInterval: false,
    staleTime: Infinity,
  });
  useEffect(() => {
    document.title = `${route.view ? TITLES[route.view] : "Not found"} · jobhouse`;
  }, [route.view]);

  if (health.isPending) return <Frame>{<Loading what="jobhouse" />}</Frame>;
  if (health.isError) return <Frame>{<ErrorState error={health.error as never} what="the server" />}</Frame>;
  client.setScheme(health.data.auth);
  return <Signed client={client} health={health.data} route={route} />;
}

function Signed({ client, health, route }: { client: ApiClient; health: Health; route: Route }) {
  const version = useSyncExternalStore(client.subscribe, client.version);
  const queryClient = useQueryClient();
  const signedIn = client.hasCredentials();
  const me = useQuery<MeView>({
    queryKey: ["me", version],
    queryFn: () => client.request<MeView>("GET", "/auth/me"),
    enabled: signedIn,
    // As every query polls (SPEC: every 2 s): a role changed by an admin shows, controls included,
    // as soon as a refreshed token carries it (it took up to a minute more).
    refetchInterval: POLL_MS,
  });
  const onLogin = route.view === "login";
  const [live, setLive] = useState<LiveState>("connecting");
  const ready = signedIn && me.isSuccess;
  // Signed in: the event stream makes every view refetch as soon as what it shows changed.
  useEffect(() => (ready ? startLiveUpdates(client, queryClient, setLive) : undefined), [ready, client, queryClient, version]);

  // Signed out (logout, or a 401 that one refresh could not mend): forget what the last caller saw.
  useEffect(() => {
    if (!signedIn) {
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== "health" });
      if (!onLogin) navigate(hrefFor("login", { next: window.location.pathname + window.location.search }), { replace: true });
    }
  }, [signedIn, onLogin, queryClient]);

  // Signed in already: the sign-in view goes where it would after signing in (it showed a bare
  // form, and a second sign-in there left the first session's refresh token live for its lifetime).
  useEffect(() => {
    if (signedIn && onLogin) navigate(safeNext(route.params.get("next")), { replace: true });
  }, [signedIn, onLogin, route]);

  if (onLogin || !signedIn) {
    return (
      <Frame>
        <LoginPage client={client} next={route.params.get("next")} />
      </Frame>
    );
  }
  if (me.isPending) return <Frame>{<Loading what="your session" />}</Frame>;
  // A failed poll of a session already shown keeps the page (each view keeps what it last showed,
  // and ServerDown says the server is not answering): it replaced the whole app, navigation too.
  if (me.data === undefined) return <Frame>{<ErrorState error={me.error as never} what="your session" />}</Frame>;
  const session: Session = { client, me: me.data, mode: health.mode };
  return (
    <SessionProvider value={session}>
      <Frame route={route} session={session} live={live}>
        <ServerDown client={client} />
        <CurrentView route={route} />
      </Frame>
    </SessionProvider>
  );
}

function CurrentView({ route }: { route: Route }) {
  const id = route.params.get("id");
  switch (route.view) {
    case "jobs":
      return <JobsPage />;
    case "job":
      return <JobPage key={id} id={id} tasksCursor={route.params.get("tasks_cursor")} />;
    case "task":
      return <TaskPage key={id} id={id} attempt={route.params.get("attempt")} />;
    case "workers":
      return <WorkersPage />;
    case "registered":
      return <RegisteredPage />;
    case "objects":
      return <ObjectsPage />;
    case "object":
      return <ObjectPage key={route.params.get("name")} name={route.params.get("name")} />;
    default:
      return (
        <section>
          <h1>No such view</h1>
          <p>
            The address names a view this app does not have. Go to the <Link href={hrefFor("jobs")}>jobs</Link>.
          </p>
        </section>
      );
  }
}

const NAV: [ViewName, string, ViewName[]][] = [
  ["jobs", "Jobs", ["jobs", "job", "task"]],
  ["registered", "Registered", ["registered"]],
  ["workers", "Workers", ["workers"]],
  ["objects", "Objects", ["objects", "object"]],
];

function Frame({ children, route, session, live }: { children: ReactNode; route?: Route; session?: Session; live?: LiveState }) {
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href={hrefFor("jobs")} className="brand">
          jobhouse
        </Link>
        {session ? (
          <nav aria-label="Main">
            <ul>
              {NAV.map(([view, label, owns]) => (
                <li key={view}>
                  <Link href={hrefFor(view)} aria-current={route?.view && owns.includes(route.view) ? "page" : undefined}>
                    {label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <div className="topbar-end">
          {live ? <LiveBadge state={live} /> : null}
          {session ? <UserMenu session={session} /> : null}
          <ThemeToggle />
        </div>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

function UserMenu({ session }: { session: Session }) {
  const { client, me, mode } = session;
  const scheme = client.scheme();
  return (
    <>
      <span className="muted mode">{mode}</span>
      <span className="user" aria-label="Signed in as">
        {me.username} <span className="role">{me.role}</span>
      </span>
      {scheme !== "none" ? (
        <button type="button" onClick={() => void client.logout().then(() => navigate(hrefFor("login"), { replace: true }))}>
          Sign out
        </button>
      ) : null}
    </>
  );
}

/** Whether changes arrive as they happen, or only by the 2 s refresh. */
function LiveBadge({ state }: { state: LiveState }) {
  const [label, title] =
    state === "live"
      ? ["Live", "Changes appear as they happen (event stream connected)"]
      : state === "connecting"
        ? ["Connecting", "Opening the event stream; the page refreshes every 2 s meanwhile"]
        : ["Polling", "The event stream is not connected: the page refreshes every 2 s"];
  return (
    <span className={`live-badge live-${state}`} title={title} role="status">
      {label}
    </span>
  );
}

/** Says so when the server stops answering: the page keeps what it last showed, and keeps asking. */
function ServerDown({ client }: { client: ApiClient }) {
  const since = useSyncExternalStore(client.subscribeReachability, client.unreachableSince);
  if (since === null) return null;
  return (
    <div className="server-down" role="alert">
      The server is not answering (since {new Date(since).toLocaleTimeString()}): this page shows what it last said, and keeps asking.
    </div>
  );
}
