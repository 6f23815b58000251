// A Gantt chart of a job's task attempts: one row per task that started, a bar from its start to its
// end (or to now while it runs), coloured by status, on the job's own time axis. It is a real <table>
// with header cells and each status written out (CONTRACT §11), like every other table.

import { memo } from "react";
import type { JobTaskView } from "../../../src/models/index.js";
import { formatDuration } from "../lib/format.js";
import { hrefFor } from "../lib/route.js";
import { Link } from "./Link.js";
import { Status } from "./Status.js";
import { useNow } from "./Time.js";

/** Rows drawn at most; a job of thousands of tasks shows its first ones by start time. */
const MAX_ROWS = 300;

export function Timeline({ tasks }: { tasks: JobTaskView[] }) {
  const started = tasks.filter((t) => t.started_at !== null);
  if (started.length === 0) return <p className="muted">No task has started yet.</p>;
  // Only a timeline with open bars moves with the clock.
  return started.some((t) => t.completed_at === null) ? <LiveTimeline started={started} /> : <Chart started={started} now={0} />;
}

function LiveTimeline({ started }: { started: JobTaskView[] }) {
  return <Chart started={started} now={useNow()} />;
}

function Chart({ started, now }: { started: JobTaskView[]; now: number }) {
  const rows = [...started].sort((a, b) => Date.parse(a.started_at!) - Date.parse(b.started_at!)).slice(0, MAX_ROWS);
  const begin = Date.parse(rows[0]!.started_at!);
  const endOf = (t: JobTaskView) => (t.completed_at === null ? now : Date.parse(t.completed_at));
  const end = Math.max(begin + 1, ...rows.map(endOf));
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
              <span className="visually-hidden">Attempt, from the job's start</span>
              <span className="timeline-axis" aria-hidden="true">
                <span>0</span>
                <span>{formatDuration(span / 2)}</span>
                <span>{formatDuration(span)}</span>
              </span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((task) => {
            const start = Date.parse(task.started_at!);
            const finish = endOf(task);
            return (
              <Bar
                key={task.id}
                id={task.id}
                name={task.name}
                status={task.status}
                left={((start - begin) / span) * 100}
                width={Math.max(0.4, ((finish - start) / span) * 100)}
                text={`${task.name}: ${task.status}, attempt ${task.attempt}, ${formatDuration(finish - start)}`}
              />
            );
          })}
        </tbody>
      </table>
      {started.length > MAX_ROWS ? <p className="muted">Showing the first {MAX_ROWS} of {started.length} started tasks.</p> : null}
    </div>
  );
}

const Bar = memo(function Bar({ id, name, status, left, width, text }: { id: string; name: string; status: string; left: number; width: number; text: string }) {
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
          <span className={`timeline-bar status-bg-${status.toLowerCase()}`} style={{ left: `${left}%`, width: `${width}%` }} title={text}>
            <span className="visually-hidden">{text}</span>
          </span>
        </span>
      </td>
    </tr>
  );
});
