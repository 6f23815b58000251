// A Gantt chart of a job's task attempts: one row per task that started, a bar per attempt from its
// start to its end (or to now while it runs), coloured by status, on the job's own time axis; the
// attempts before a task's latest (failed, retried) come from list_job_attempts. It is a real <table>
// with header cells and each status written out (CONTRACT §11), like every other table.

import { memo } from "react";
import type { AttemptView, JobTaskView } from "../../../src/models/index.js";
import { formatDuration } from "../lib/format.js";
import { hrefFor } from "../lib/route.js";
import { Link } from "./Link.js";
import { Status } from "./Status.js";
import { useNow } from "./Time.js";

/** Rows drawn at most; a job of thousands of tasks shows its first ones by start time. */
const MAX_ROWS = 300;

/** One bar: an attempt from its start to its end (null while it runs). */
interface Segment {
  attempt: number;
  status: string;
  start: number;
  end: number | null;
  error: string | null;
}

/** A task's row: its earlier attempts (failed and retried), then its latest, the task itself. */
interface Row {
  task: JobTaskView;
  segments: Segment[];
}

export function Timeline({ tasks, attempts = [], moreAttempts = false }: { tasks: JobTaskView[]; attempts?: AttemptView[]; moreAttempts?: boolean }) {
  const earlier = new Map<string, Segment[]>();
  for (const a of attempts) {
    if (a.started_at === null) continue;
    const list = earlier.get(a.task_id) ?? [];
    list.push({ attempt: a.attempt, status: "FAILED", start: Date.parse(a.started_at), end: Date.parse(a.ended_at), error: a.error });
    earlier.set(a.task_id, list);
  }
  const rows: Row[] = [];
  for (const task of tasks) {
    const segments = [...(earlier.get(task.id) ?? [])];
    // A task waiting out its backoff still carries its failed attempt's start; that attempt is
    // drawn from the history above, and the next one has not started.
    if (task.started_at !== null && task.status !== "PENDING") {
      segments.push({ attempt: task.attempt, status: task.status, start: Date.parse(task.started_at), end: task.completed_at === null ? null : Date.parse(task.completed_at), error: task.error });
    }
    if (segments.length > 0) rows.push({ task, segments });
  }
  if (rows.length === 0) return <p className="muted">No task has started yet.</p>;
  // Only a timeline with open bars moves with the clock.
  const chart = rows.some((r) => r.segments.some((s) => s.end === null)) ? <LiveTimeline rows={rows} /> : <Chart rows={rows} now={0} />;
  if (!moreAttempts) return chart;
  return (
    <>
      {chart}
      <p className="muted">
        Showing the first {attempts.length} earlier attempts of this job; the rest are listed by <code>GET /api/v0/jobs/…/attempts</code>.
      </p>
    </>
  );
}

function LiveTimeline({ rows }: { rows: Row[] }) {
  return <Chart rows={rows} now={useNow()} />;
}

function Chart({ rows: all, now }: { rows: Row[]; now: number }) {
  const firstStart = (r: Row) => r.segments[0]!.start;
  const rows = [...all].sort((a, b) => firstStart(a) - firstStart(b)).slice(0, MAX_ROWS);
  const begin = Math.min(...rows.map(firstStart));
  const endOf = (s: Segment) => s.end ?? now;
  const end = Math.max(begin + 1, ...rows.flatMap((r) => r.segments.map(endOf)));
  const span = end - begin;
  return (
    <div className="timeline">
      <table aria-label="Timeline of task attempts">
        <thead>
          <tr>
            <th scope="col" className="timeline-name">
              Task
            </th>
            <th scope="col" className="timeline-status">
              Status
            </th>
            <th scope="col">
              <span className="visually-hidden">Attempts, from the job's start</span>
              <span className="timeline-axis" aria-hidden="true">
                <span>0</span>
                <span>{formatDuration(span / 2)}</span>
                <span>{formatDuration(span)}</span>
              </span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ task, segments }) => (
            <Bars
              key={task.id}
              id={task.id}
              name={task.name}
              status={task.status}
              bars={segments.map((s) => ({
                key: s.attempt,
                status: s.status,
                left: ((s.start - begin) / span) * 100,
                width: Math.max(0.4, ((endOf(s) - s.start) / span) * 100),
                text: `${task.name}: attempt ${s.attempt}, ${s.status}, ${formatDuration(endOf(s) - s.start)}${s.status === "FAILED" && s.error ? `: ${s.error}` : ""}`,
              }))}
            />
          ))}
        </tbody>
      </table>
      {all.length > MAX_ROWS ? <p className="muted">Showing the first {MAX_ROWS} of {all.length} started tasks.</p> : null}
    </div>
  );
}

interface BarView {
  key: number;
  status: string;
  left: number;
  width: number;
  text: string;
}

const Bars = memo(function Bars({ id, name, status, bars }: { id: string; name: string; status: string; bars: BarView[] }) {
  return (
    <tr>
      <th scope="row" className="timeline-name">
        <Link href={hrefFor("task", { id })}>{name}</Link>
      </th>
      <td className="timeline-status">
        <Status value={status} />
      </td>
      <td>
        <span className="timeline-track">
          {bars.map((bar) => (
            <span key={bar.key} className={`timeline-bar status-bg-${bar.status.toLowerCase()}`} style={{ left: `${bar.left}%`, width: `${bar.width}%` }} title={bar.text}>
              <span className="visually-hidden">{bar.text}</span>
            </span>
          ))}
        </span>
      </td>
    </tr>
  );
});
