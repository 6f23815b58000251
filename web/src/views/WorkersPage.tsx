// ?p=workers: every worker with its status, heartbeat age and counts; in distributed mode admins
// start one (POST /workers spawns a process) and stop active ones.

import type { PageOf, WorkerView } from "../../../src/models/index.js";
import { useIsAdmin, useSession } from "../api/context.js";
import { queryString, useApiMutation, useApiQuery } from "../api/queries.js";
import { Choice } from "../components/Choice.js";
import { ConfirmAction } from "../components/Confirm.js";
import { PagedList } from "../components/PagedList.js";
import { usePager } from "../components/Pager.js";
import { Empty, MutationError } from "../components/States.js";
import { Status } from "../components/Status.js";
import { Time } from "../components/Time.js";
import { useSearchParam } from "../lib/route.js";

const STATUSES = ["ACTIVE", "STOPPING", "STOPPED", "LOST"];

export function WorkersPage() {
  const { mode } = useSession();
  const isAdmin = useIsAdmin();
  const [statusParam, setStatus] = useSearchParam("status");
  const status = statusParam ?? "";
  const pager = usePager();
  const workers = useApiQuery<PageOf<WorkerView>>("/workers" + queryString({ status, limit: 50, cursor: pager.cursor }));
  const start = useApiMutation<void>("POST", () => "/workers", () => ({}));
  const stop = useApiMutation<string>("POST", (id) => `/workers/${id}/stop`);
  const manages = isAdmin && mode === "distributed";

  return (
    <section>
      <header className="view-header">
        <h1>Workers</h1>
        {manages ? (
          <div className="actions">
            <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>
              Start worker
            </button>
            {start.isSuccess && !registeredSince(workers.data?.items, start.submittedAt) ? <span role="status">Starting: it appears here once it registers.</span> : null}
            <MutationError error={start.error} />
          </div>
        ) : null}
      </header>
      {mode === "local" ? <p className="muted">Local mode: the server runs its workers itself.</p> : null}
      <form className="filters" aria-label="Filter workers" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Status" value={status} anyLabel="Any status" choices={STATUSES} onChange={(v) => (setStatus(v), pager.reset())} />
      </form>
      <MutationError error={stop.error} />
      <PagedList query={workers} what="workers" pager={pager}
        empty={
          <Empty title={status ? `No ${status.toLowerCase()} workers` : "No workers have registered"}>
            {mode === "distributed" ? (
              <>
                Start one with <code>jobhouse worker start</code>
                {manages ? " or the button above" : ""}.
              </>
            ) : null}
          </Empty>
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Status</th>
                <th scope="col">Host and pid</th>
                <th scope="col">Concurrency</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Started</th>
                <th scope="col">Completed</th>
                <th scope="col">Failed</th>
                {manages ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {items.map((w) => (
                <tr key={w.id}>
                  <td>#{w.id}</td>
                  <td>
                    <Status value={w.status} />
                  </td>
                  <td>
                    {w.hostname} · {w.pid}
                  </td>
                  <td className="num">{w.concurrency}</td>
                  <td>
                    <Time iso={w.last_heartbeat} />
                  </td>
                  <td>
                    <Time iso={w.started_at} />
                  </td>
                  <td className="num">{w.tasks_completed.toLocaleString("en-US")}</td>
                  <td className="num">{w.tasks_failed.toLocaleString("en-US")}</td>
                  {manages ? (
                    <td>
                      {w.status === "ACTIVE" ? (
                        <ConfirmAction
                          action="Stop"
                          label={`Stop worker ${w.id}`}
                          question="Stop it? It finishes its running tasks, then exits."
                          confirm={`Yes, stop worker ${w.id}`}
                          keep="Keep it"
                          pending={stop.isPending}
                          onConfirm={(done) => stop.mutate(w.id, { onSettled: done })}
                        />
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedList>
    </section>
  );
}

/**
 * Whether a worker registered after the start was asked for (a second of clock difference allowed):
 * the note that one is starting then has said what it had to.
 */
function registeredSince(workers: readonly WorkerView[] | undefined, askedAtMs: number): boolean {
  return (workers ?? []).some((worker) => Date.parse(worker.started_at) >= askedAtMs - 1000);
}
