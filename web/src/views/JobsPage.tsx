// ?p=jobs: every run, newest first, filtered by status, name and age, paged by cursor.

import { useMemo } from "react";
import type { JobView, PageOf } from "../../../src/models/index.js";
import { JOB_STATUSES } from "../../../src/models/status-names.js";
import { queryString, useApiQuery } from "../api/queries.js";
import { Choice } from "../components/Choice.js";
import { Link } from "../components/Link.js";
import { PagedList } from "../components/PagedList.js";
import { usePager } from "../components/Pager.js";
import { Empty } from "../components/States.js";
import { Status } from "../components/Status.js";
import { Elapsed, Time } from "../components/Time.js";
import { hrefFor, useSearchParam } from "../lib/route.js";

const PAGE_SIZES = [50, 100, 500];
const SINCE: [label: string, ms: number | null][] = [
  ["Any time", null],
  ["Last hour", 3_600_000],
  ["Last 24 hours", 86_400_000],
  ["Last 7 days", 7 * 86_400_000],
];

export function JobsPage() {
  // The filters live in the address: a filtered list reloads, and can be shared, as it is.
  const [statusParam, setStatus] = useSearchParam("status");
  const [nameParam, setName] = useSearchParam("name");
  const [createdParam, setCreated] = useSearchParam("created");
  const [limitParam, setLimit] = useSearchParam("limit");
  const status = statusParam ?? "";
  const name = nameParam ?? "";
  const sinceMs = SINCE.some(([, ms]) => ms !== null && String(ms) === createdParam) ? Number(createdParam) : null;
  const limit = PAGE_SIZES.includes(Number(limitParam)) ? Number(limitParam) : 50;
  // The bound moves only when the filter is chosen (or the page loads), so the query's key stays
  // put between polls.
  const since = useMemo(() => (sinceMs === null ? null : new Date(Date.now() - sinceMs).toISOString()), [sinceMs]);
  const pager = usePager();
  const path = "/jobs" + queryString({ status, name: name.trim(), since, limit, cursor: pager.cursor });
  const jobs = useApiQuery<PageOf<JobView>>(path);
  const filtered = status !== "" || name.trim() !== "" || since !== null;

  return (
    <section>
      <header className="view-header">
        <h1>Jobs</h1>
      </header>
      <form className="filters" role="search" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Status" value={status} anyLabel="Any status" choices={JOB_STATUSES} onChange={(v) => (setStatus(v), pager.reset())} />
        <label>
          Name
          <input type="search" value={name} placeholder="exact job name" onChange={(e) => (setName(e.target.value), pager.reset())} />
        </label>
        <label>
          Created
          <select
            value={sinceMs ?? ""}
            onChange={(e) => {
              setCreated(e.target.value === "" ? null : e.target.value);
              pager.reset();
            }}
          >
            {SINCE.map(([label, ms]) => (
              <option key={label} value={ms ?? ""}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Rows per page
          <select value={limit} onChange={(e) => (setLimit(e.target.value === "50" ? null : e.target.value), pager.reset())}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </form>
      <PagedList query={jobs} what="jobs" pager={pager}
        empty={
          <Empty title={filtered ? "No job matches these filters" : "No jobs yet"}>
            {filtered ? "Clear a filter to see more." : (
              <>
                Run one with <code>jobhouse run-job examples/primes.ts:countPrimes</code>, or from the <Link href={hrefFor("registered")}>registered jobs</Link>.
              </>
            )}
          </Empty>
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Tasks</th>
                <th scope="col">Created</th>
                <th scope="col">Duration</th>
                <th scope="col">Run type</th>
              </tr>
            </thead>
            <tbody>
              {items.map((job) => (
                <tr key={job.id}>
                  <td>
                    <Link href={hrefFor("job", { id: job.id })}>{job.name}</Link>
                    <span className="id">#{job.id}</span>
                  </td>
                  <td>
                    <Status value={job.status} />
                  </td>
                  <td className="num">
                    {job.completed_tasks} / {job.total_tasks}
                  </td>
                  <td>
                    <Time iso={job.created_at} />
                  </td>
                  <td className="num">
                    <Elapsed start={job.started_at} end={job.completed_at} />
                  </td>
                  <td>{job.run_type.toLowerCase()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedList>
    </section>
  );
}
