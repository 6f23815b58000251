// ?p=task&id=…: one task: its facts, arguments and result, its attempts, and the log of the chosen
// attempt, which follows (polling each second) while the task runs.

import { useEffect, useRef } from "react";
import type { TaskDetail, TaskLogsView } from "../../../src/models/index.js";
import { TERMINAL_TASK_STATUSES } from "../../../src/models/status-names.js";
import { useApiQuery } from "../api/queries.js";
import { Link } from "../components/Link.js";
import { Empty, ErrorState, Loading, ViewError } from "../components/States.js";
import { Status } from "../components/Status.js";
import { Elapsed, Time } from "../components/Time.js";
import { formatBytes, shownJson, visibleBidi } from "../lib/format.js";
import { hrefFor, navigate } from "../lib/route.js";
import { ResultRef } from "./JobPage.js";

/**
 * `attempt`: the attempt named in the address (`&attempt=2`), so a link to an earlier attempt's log
 * survives a reload and can be shared; the latest that started when absent or out of range.
 */
export function TaskPage({ id, attempt: asked }: { id: string | null; attempt?: string | null }) {
  const task = useApiQuery<TaskDetail>(id ? `/tasks/${encodeURIComponent(id)}` : null);
  if (!id) {
    return (
      <section>
        <h1>Task</h1>
        <Empty title="No task named in the address">
          Open one from its <Link href={hrefFor("jobs")}>job</Link>.
        </Empty>
      </section>
    );
  }
  if (task.isPending) return <Loading what="the task" />;
  if (task.isError && !task.data) return <ViewError title="Task" error={task.error} what="task" />;
  const t = task.data;
  const running = t.status === "RUNNING" || t.status === "CLAIMED";
  // Attempts that started: log_path names the latest (a retry still waiting, or a task skipped or
  // cancelled before it ran, counts an attempt that has no log).
  const started = t.log_path ? Number(/(\d+)\.log$/.exec(t.log_path)?.[1] ?? t.attempt) : 0;
  const attempts = Array.from({ length: started }, (_, i) => i + 1);
  const named = asked && /^\d{1,9}$/.test(asked) ? Number(asked) : null;
  const shown = named !== null && named >= 1 && named <= started ? named : started > 0 ? started : null;

  return (
    <section>
      <header className="view-header">
        <h1>
          Task {t.name} <span className="id">#{t.id}</span>
        </h1>
        <Status value={t.status} />
      </header>
      <dl className="facts">
        <dt>Job</dt>
        <dd>
          <Link href={hrefFor("job", { id: t.job_id })}>#{t.job_id}</Link>
        </dd>
        <dt>Attempt</dt>
        <dd>
          {t.attempt} of at most {t.max_attempts}
        </dd>
        <dt>Duration</dt>
        <dd>
          <Elapsed start={t.started_at} end={t.completed_at} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={t.created_at} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={t.started_at} />
        </dd>
        <dt>Completed</dt>
        <dd>
          <Time iso={t.completed_at} />
        </dd>
        <dt>Worker</dt>
        <dd>{t.worker_id ? `#${t.worker_id}` : "—"}</dd>
        <dt>Entrypoint</dt>
        <dd>
          <code>{t.entrypoint}</code>
        </dd>
        <dt>Waits for</dt>
        <dd>{t.depends_on.length === 0 ? "nothing" : <Dependencies ids={t.depends_on} />}</dd>
      </dl>
      {t.error ? (
        <div className="error-block" role="alert">
          <h2>Error</h2>
          <pre>{visibleBidi(t.error)}</pre>
        </div>
      ) : null}
      <div className="two-columns">
        <div>
          <h2>Arguments</h2>
          <pre className="json">{shownJson(t.kwargs)}</pre>
        </div>
        <div>
          <h2>Result</h2>
          {t.result_ref === null ? <p className="muted">{running ? "Not yet." : "None."}</p> : <ResultRef value={t.result_ref} />}
        </div>
      </div>
      <h2>Log</h2>
      {shown === null ? (
        <Empty title="No attempt has started">The log appears when a worker starts the task.</Empty>
      ) : (
        <>
          {attempts.length > 1 ? (
            <div className="tabs" role="group" aria-label="Attempts">
              {attempts.map((n) => (
                <button type="button" key={n} aria-pressed={n === shown} onClick={() => navigate(hrefFor("task", { id: t.id, attempt: n === started ? null : n }), { replace: true })}>
                  Attempt {n}
                </button>
              ))}
            </div>
          ) : null}
          {asked && shown !== named ? (
            <p className="muted" role="status">
              This task has no attempt {visibleBidi(asked.slice(0, 20))}: showing attempt {shown}, its {shown === 1 ? "only" : "latest"} one.
            </p>
          ) : null}
          {/* One per attempt: reused, it showed the last attempt's lines under the new one's name
              until the new read came (the app keeps a query's previous data while it refetches). */}
          <TaskLog key={shown} id={t.id} attempt={shown} follow={running && shown === t.attempt} final={shown < t.attempt || TERMINAL_TASK_STATUSES.includes(t.status)} />
        </>
      )}
    </section>
  );
}

/** Links shown before the rest fold away: a fan-in of 600 filled the page before its log. */
const DEPENDENCIES_SHOWN = 20;

function Dependencies({ ids }: { ids: readonly string[] }) {
  const links = (list: readonly string[], offset = 0) =>
    list.map((dep, i) => (
      <span key={dep}>
        {i + offset > 0 ? ", " : ""}
        <Link href={hrefFor("task", { id: dep })}>#{dep}</Link>
      </span>
    ));
  if (ids.length <= DEPENDENCIES_SHOWN) return <>{links(ids)}</>;
  return (
    <>
      {links(ids.slice(0, DEPENDENCIES_SHOWN))}
      <details className="more">
        <summary>and {(ids.length - DEPENDENCIES_SHOWN).toLocaleString("en-US")} more</summary>
        {links(ids.slice(DEPENDENCIES_SHOWN), DEPENDENCIES_SHOWN)}
      </details>
    </>
  );
}

/**
 * `final`: the attempt is over (an earlier one, or the task ended), so its log is read once (asked
 * again only until a read succeeds): polled, a finished task's log of up to 1 MiB came again every
 * 2 s for as long as its page was open.
 */
function TaskLog({ id, attempt, follow, final }: { id: string; attempt: number; follow: boolean; final: boolean }) {
  const log = useApiQuery<TaskLogsView>(`/tasks/${id}/logs?attempt=${attempt}`, { refetchInterval: follow ? 1000 : 2000, untilRead: final });
  // Read once more as the attempt ends: its last lines came after the last poll.
  const wasFinal = useRef(final);
  const { refetch } = log;
  useEffect(() => {
    if (final && !wasFinal.current) void refetch();
    wasFinal.current = final;
  }, [final, refetch]);
  const box = useRef<HTMLPreElement>(null);
  const pinned = useRef(true);
  const content = log.data?.content ?? "";
  // Follow the end while the reader is at the end; leave them where they scrolled otherwise.
  useEffect(() => {
    const element = box.current;
    if (element && pinned.current) element.scrollTop = element.scrollHeight;
  }, [content]);
  if (log.isPending) return <Loading what="the log" />;
  if (log.isError && !log.data) return <ErrorState error={log.error} what="log" />;
  const view = log.data;
  if (!view.available) {
    return (
      <Empty title="The log is not available here">
        It is kept {view.path ? <>at <code>{view.path}</code> </> : null}on {view.host ? <><code>{view.host}</code>, </> : null}the machine of the worker that ran this attempt.
      </Empty>
    );
  }
  return (
    <>
      <p className="muted">
        {view.path ? <code>{view.path}</code> : null} {view.size_bytes !== null ? `· ${formatBytes(view.size_bytes)}` : ""}
        {view.truncated ? " · showing the last 1 MiB" : ""}
        {follow ? " · following" : ""}
      </p>
      <pre
        className="log"
        ref={box}
        role="log"
        tabIndex={0}
        aria-label={`Log of attempt ${attempt}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {view.content === "" ? <span className="muted">(empty)</span> : visibleBidi(view.content)}
      </pre>
    </>
  );
}
