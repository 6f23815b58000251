// ?p=job&id=…: one run: its status and duration, the task graph with live statuses, a timeline of
// attempts, the task table, the error, and (for admins) cancel, or re-run from failure.

import { memo } from "react";
import type { AttemptView, JobDetail, JobTaskView, JobView, PageOf } from "../../../src/models/index.js";
import { TERMINAL_JOB_STATUSES } from "../../../src/models/status-names.js";
import { useIsAdmin } from "../api/context.js";
import { useApiMutation, useApiQuery } from "../api/queries.js";
import { ConfirmAction } from "../components/Confirm.js";
import { GraphView } from "../components/Graph.js";
import { Link } from "../components/Link.js";
import { Empty, Loading, MutationError, ViewError } from "../components/States.js";
import { Status } from "../components/Status.js";
import { Elapsed, Time } from "../components/Time.js";
import { Timeline } from "../components/Timeline.js";
import { shownJson, visibleBidi } from "../lib/format.js";
import { hrefFor, navigate } from "../lib/route.js";

export function JobPage({ id, tasksCursor }: { id: string | null; tasksCursor: string | null }) {
  // A large job's tasks come a page at a time; the page's cursor is in the address, so it reloads.
  const job = useApiQuery<JobDetail>(id ? `/jobs/${encodeURIComponent(id)}${tasksCursor ? `?tasks_cursor=${encodeURIComponent(tasksCursor)}` : ""}` : null);
  // The attempts before a task's latest, for the timeline: asked for only when a task was retried.
  const retried = job.data?.tasks.some((t) => t.attempt > 1) ?? false;
  const attempts = useApiQuery<PageOf<AttemptView>>(id && retried ? `/jobs/${encodeURIComponent(id)}/attempts?limit=500` : null);
  if (!id) return <Missing />;
  if (job.isPending) return <Loading what="the job" />;
  if (job.isError && !job.data) return <ViewError title="Job" error={job.error} what="job" />;
  const detail = job.data;
  const counts = new Map<string, number>();
  for (const task of detail.tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
  // A large job comes a page of tasks at a time: edges from tasks beyond the page are not drawn.
  const shown = new Set(detail.tasks.map((t) => t.id));

  return (
    <section>
      <header className="view-header">
        <h1>
          Job {detail.name} <span className="id">#{detail.id}</span>
        </h1>
        <Status value={detail.status} />
        <CancelJob job={detail} />
        <RerunJob job={detail} />
      </header>
      {detail.rerun_of ? (
        <p className="muted">
          Re-run of <Link href={hrefFor("job", { id: detail.rerun_of })}>job #{detail.rerun_of}</Link>: the tasks it had completed were reused.
        </p>
      ) : null}
      <dl className="facts">
        <dt>Duration</dt>
        <dd>
          <Elapsed start={detail.started_at} end={detail.completed_at} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={detail.created_at} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={detail.started_at} />
        </dd>
        <dt>Completed</dt>
        <dd>
          <Time iso={detail.completed_at} />
        </dd>
        <dt>Tasks</dt>
        <dd>
          {detail.completed_tasks} of {detail.total_tasks} completed
          {[...counts].filter(([s]) => s !== "COMPLETED").map(([s, n]) => `, ${n} ${s.toLowerCase()}`)}
        </dd>
        <dt>Entrypoint</dt>
        <dd>
          <code>{detail.entrypoint}</code>
        </dd>
        <dt>Run type</dt>
        <dd>{detail.run_type.toLowerCase()}</dd>
        {detail.code_version ? (
          <>
            <dt>Code version</dt>
            <dd>
              <code>{detail.code_version.slice(0, 12)}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {detail.error ? (
        <div className="error-block" role="alert">
          <h2>Error</h2>
          <pre>{visibleBidi(detail.error)}</pre>
        </div>
      ) : null}
      <Arguments kwargs={detail.kwargs} result={detail.result_ref} />
      <h2>Task graph</h2>
      {detail.tasks.length === 0 ? (
        <Empty title="No tasks yet">The job has not started; a worker makes its first task when it claims the job.</Empty>
      ) : (
        <GraphView
          label={`Task graph of job ${detail.id}`}
          direction="TB"
          nodes={detail.tasks.map((t) => ({ id: t.id, label: t.name, status: t.status, detail: t.attempt > 1 ? `attempt ${t.attempt}` : "", href: hrefFor("task", { id: t.id }) }))}
          edges={detail.tasks.flatMap((t) => t.depends_on.filter((from) => shown.has(from)).map((from) => ({ source: from, target: t.id })))}
        />
      )}
      <TaskPages job={detail} cursor={tasksCursor} />
      <h2>Timeline</h2>
      <Timeline tasks={detail.tasks} attempts={attempts.data?.items} moreAttempts={attempts.data?.next_cursor != null} />
      <h2>Tasks</h2>
      {detail.tasks.length === 0 ? (
        <p className="muted">None yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Status</th>
                <th scope="col">Attempt</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {detail.tasks.map((task) => (
                <TaskRow key={task.id} task={task} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** One row of the task table; a poll that left the task unchanged leaves the row alone. */
const TaskRow = memo(function TaskRow({ task }: { task: JobTaskView }) {
  return (
    <tr>
      <td>
        <Link href={hrefFor("task", { id: task.id })}>{task.name}</Link>
        <span className="id">#{task.id}</span>
      </td>
      <td>
        <Status value={task.status} />
      </td>
      <td className="num">{task.attempt}</td>
      <td>
        <Time iso={task.started_at} />
      </td>
      <td className="num">
        <Elapsed start={task.started_at} end={task.completed_at} />
      </td>
      <td className="clip">{task.error ?? ""}</td>
    </tr>
  );
});

function Missing() {
  return (
    <section>
      <h1>Job</h1>
      <Empty title="No job named in the address">
        Pick one from the <Link href={hrefFor("jobs")}>jobs list</Link>.
      </Empty>
    </section>
  );
}

function Arguments({ kwargs, result }: { kwargs: unknown; result: unknown }) {
  const hasKwargs = kwargs !== null && typeof kwargs === "object" && Object.keys(kwargs).length > 0;
  if (!hasKwargs && result === null) return null;
  return (
    <div className="two-columns">
      {hasKwargs ? (
        <div>
          <h2>Arguments</h2>
          <pre className="json">{shownJson(kwargs)}</pre>
        </div>
      ) : null}
      {result !== null ? (
        <div>
          <h2>Result</h2>
          <ResultRef value={result} />
        </div>
      ) : null}
    </div>
  );
}

/** A result that names an object or a task links to it; plain JSON is shown as it is. */
export function ResultRef({ value }: { value: unknown }) {
  if (value !== null && typeof value === "object") {
    const ref = value as { object?: unknown; task_id?: unknown };
    if (typeof ref.object === "string") {
      return (
        <p>
          Object <Link href={hrefFor("object", { name: ref.object })}>{ref.object}</Link>
        </p>
      );
    }
    if (typeof ref.task_id === "string") {
      return (
        <p>
          The result of task <Link href={hrefFor("task", { id: ref.task_id })}>#{ref.task_id}</Link>
        </p>
      );
    }
  }
  return <pre className="json">{shownJson(value)}</pre>;
}

/** A failed or cancelled run again, reusing what completed (run_job rerun_of). */
function RerunJob({ job }: { job: JobView }) {
  const isAdmin = useIsAdmin();
  const rerun = useApiMutation<string, JobView>("POST", () => "/jobs:run", (id) => ({ rerun_of: id }));
  if (!isAdmin || (job.status !== "FAILED" && job.status !== "CANCELLED")) return null;
  return (
    <div className="actions">
      <button
        type="button"
        disabled={rerun.isPending}
        title="Run it again: the tasks that completed are reused, only what failed, was skipped or was cancelled runs"
        onClick={() => rerun.mutate(job.id, { onSuccess: (created) => navigate(hrefFor("job", { id: created.id })) })}
      >
        Re-run from failure
      </button>
      <MutationError error={rerun.error} />
    </div>
  );
}

function CancelJob({ job }: { job: JobView }) {
  const isAdmin = useIsAdmin();
  const cancel = useApiMutation<string>("POST", (id) => `/jobs/${id}/cancel`);
  if (!isAdmin || TERMINAL_JOB_STATUSES.includes(job.status)) return <MutationError error={cancel.error} />;
  return (
    <div className="actions">
      <ConfirmAction
        action="Cancel job"
        question="Cancel every unfinished task of this job?"
        confirm="Yes, cancel job"
        keep="Keep running"
        pending={cancel.isPending}
        onConfirm={(done) => cancel.mutate(job.id, { onSettled: done })}
      />
      <MutationError error={cancel.error} />
    </div>
  );
}

/** Where this page of a large job's tasks is, with links to the first page and the next one. */
function TaskPages({ job, cursor }: { job: JobDetail; cursor: string | null }) {
  if (!cursor && !job.tasks_next_cursor) return null;
  const first = job.tasks[0]?.id;
  const last = job.tasks.at(-1)?.id;
  return (
    <nav className="pager" aria-label="Pages of tasks">
      <span className="muted">
        {job.tasks.length.toLocaleString("en-US")} of {job.total_tasks.toLocaleString("en-US")} tasks shown
        {first && last ? ` (#${first} to #${last})` : ""}; edges to tasks on other pages are not drawn.
      </span>
      {cursor ? <Link href={hrefFor("job", { id: job.id })}>First tasks</Link> : null}
      {job.tasks_next_cursor ? <Link href={hrefFor("job", { id: job.id, tasks_cursor: job.tasks_next_cursor })}>Next tasks</Link> : null}
    </nav>
  );
}
