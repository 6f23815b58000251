// ?p=objects: data objects (ClickHouse tables) filtered by name prefix and scope, with sizes.

import type { ObjectView, PageOf } from "../../../src/models/index.js";
import { queryString, useApiQuery } from "../api/queries.js";
import { Choice } from "../components/Choice.js";
import { Link } from "../components/Link.js";
import { PagedList } from "../components/PagedList.js";
import { usePager } from "../components/Pager.js";
import { Empty } from "../components/States.js";
import { Time } from "../components/Time.js";
import { formatBytes, formatCount } from "../lib/format.js";
import { hrefFor, useSearchParam } from "../lib/route.js";

const SCOPES = ["global", "job", "temp"];

export function ObjectsPage() {
  // The filters live in the address, like the jobs list's.
  const [prefixParam, setPrefix] = useSearchParam("prefix");
  const [scopeParam, setScope] = useSearchParam("scope");
  const prefix = prefixParam ?? "";
  const scope = scopeParam ?? "";
  const pager = usePager();
  const objects = useApiQuery<PageOf<ObjectView>>("/objects" + queryString({ prefix: prefix.trim(), scope, limit: 50, cursor: pager.cursor }));
  const filtered = prefix.trim() !== "" || scope !== "";

  return (
    <section>
      <header className="view-header">
        <h1>Objects</h1>
      </header>
      <form className="filters" role="search" aria-label="Filter objects" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name prefix
          <input type="search" value={prefix} onChange={(e) => (setPrefix(e.target.value), pager.reset())} />
        </label>
        <Choice label="Scope" value={scope} anyLabel="Any scope" choices={SCOPES} onChange={(v) => (setScope(v), pager.reset())} />
      </form>
      <PagedList query={objects} what="objects" pager={pager}
        empty={
          <Empty title={filtered ? "No object matches these filters" : "No data objects yet"}>
            {filtered ? "Clear a filter to see more." : "A job makes them with createObject(); the sales example makes several."}
          </Empty>
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scope</th>
                <th scope="col">Rows</th>
                <th scope="col">Size</th>
                <th scope="col">Created</th>
                <th scope="col">Job</th>
              </tr>
            </thead>
            <tbody>
              {items.map((o) => (
                <tr key={o.table}>
                  <td>
                    <Link href={hrefFor("object", { name: o.scope === "global" ? o.name : o.table })}>{o.name}</Link>
                    {o.table !== o.name ? <span className="id">{o.table}</span> : null}
                  </td>
                  <td>{o.scope}</td>
                  <td className="num">{formatCount(o.row_count)}</td>
                  <td className="num">{formatBytes(o.size_bytes)}</td>
                  <td>
                    <Time iso={o.created_at} />
                  </td>
                  <td>{o.job_id ? <Link href={hrefFor("job", { id: o.job_id })}>#{o.job_id}</Link> : <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedList>
    </section>
  );
}
