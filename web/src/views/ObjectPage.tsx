// ?p=object&name=…: one data object: its facts, schema, lineage graph (upstream and downstream,
// each a link), column lineage and the SQL of every operation that made or appended to it.

import type { ObjectDetail } from "../../../src/models/index.js";
import { useApiQuery } from "../api/queries.js";
import { type GraphNode, GraphView } from "../components/Graph.js";
import { Link } from "../components/Link.js";
import { Empty, ErrorState, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";
import { formatBytes, formatCount } from "../lib/format.js";
import { hrefFor } from "../lib/route.js";

type Lineage = ObjectDetail["lineage_summary"];
type Neighbour = Lineage["upstream_objects"][number];

export function ObjectPage({ name }: { name: string | null }) {
  const object = useApiQuery<ObjectDetail>(name ? `/objects/${encodeURIComponent(name)}` : null);
  if (!name) {
    return (
      <section>
        <h1>Object</h1>
        <Empty title="No object named in the address">
          Pick one from the <Link href={hrefFor("objects")}>objects list</Link>.
        </Empty>
      </section>
    );
  }
  if (object.isPending) return <Loading what="the object" />;
  if (object.isError && !object.data) return <ErrorState error={object.error} what="object" />;
  const o = object.data;
  const lineage = o.lineage_summary;

  return (
    <section>
      <header className="view-header">
        <h1>
          Object {o.name} {o.table !== o.name ? <span className="id">{o.table}</span> : null}
        </h1>
      </header>
      <dl className="facts">
        <dt>Scope</dt>
        <dd>
          {o.scope}
          {o.persistent ? ", persistent" : ""}
        </dd>
        <dt>Rows</dt>
        <dd>{formatCount(o.row_count)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(o.size_bytes)}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={o.created_at} />
        </dd>
        <dt>Made by</dt>
        <dd>
          {lineage.produced_by ? (
            <>
              {lineage.produced_by.operation}
              {lineage.produced_by.job_id ? (
                <>
                  {" "}in job <Link href={hrefFor("job", { id: lineage.produced_by.job_id })}>#{lineage.produced_by.job_id}</Link>
                </>
              ) : null}
              {lineage.produced_by.task_id ? (
                <>
                  , task <Link href={hrefFor("task", { id: lineage.produced_by.task_id })}>#{lineage.produced_by.task_id}</Link>
                </>
              ) : null}
            </>
          ) : (
            "unknown"
          )}
        </dd>
        <dt>Table</dt>
        <dd>
          <code>{o.table}</code> ({o.table_schema.engine}
          {o.table_schema.order_by ? `, ORDER BY ${o.table_schema.order_by}` : ""})
        </dd>
      </dl>
      <h2>Schema</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Column</th>
              <th scope="col">Type</th>
              <th scope="col">Nullable</th>
              <th scope="col">Comes from</th>
            </tr>
          </thead>
          <tbody>
            {o.table_schema.columns.map((c) => (
              <tr key={c.name}>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>
                  <code>{"Array(".repeat(c.array_depth) + (c.low_cardinality ? `LowCardinality(${c.type})` : c.type) + ")".repeat(c.array_depth)}</code>
                </td>
                <td>{c.nullable ? "yes" : "no"}</td>
                <td>{(lineage.columns[c.name] ?? []).map((src) => `${src.object}.${src.column}`).join(", ") || <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Lineage</h2>
      {lineage.upstream_objects.length === 0 && lineage.downstream_objects.length === 0 ? (
        <p className="muted">Nothing upstream or downstream is recorded for this object.</p>
      ) : (
        <GraphView label={`Lineage of ${o.name}`} direction="LR" {...lineageGraph(o)} />
      )}
      <h2>Operations</h2>
      {lineage.operations.length === 0 ? (
        <p className="muted">No operation is recorded.</p>
      ) : (
        <ol className="operations">
          {lineage.operations.map((op, i) => (
            <li key={i}>
              <p>
                <strong>{op.operation}</strong> <Time iso={op.at} />
                {op.job_id ? (
                  <>
                    {" "}· job <Link href={hrefFor("job", { id: op.job_id })}>#{op.job_id}</Link>
                  </>
                ) : null}
                {op.task_id ? (
                  <>
                    {" "}· task <Link href={hrefFor("task", { id: op.task_id })}>#{op.task_id}</Link>
                  </>
                ) : null}
              </p>
              <pre className="sql">{op.sql}</pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** The object in the middle, what it came from on the left, what was made from it on the right. */
function lineageGraph(o: ObjectDetail): { nodes: GraphNode[]; edges: { source: string; target: string }[] } {
  const self = `self:${o.table}`;
  const node = (n: Neighbour): GraphNode => ({
    id: `obj:${n.id}`,
    label: n.name,
    detail: n.exists ? (n.scope ?? "") : "dropped",
    ...(n.exists ? { href: hrefFor("object", { name: n.id }) } : {}),
  });
  const upstream = o.lineage_summary.upstream_objects.map(node);
  const downstream = o.lineage_summary.downstream_objects.map(node);
  // An object both upstream and downstream (a table rebuilt from itself) is drawn once.
  const nodes = new Map<string, GraphNode>([[self, { id: self, label: o.name, detail: o.scope, emphasis: true }]]);
  for (const n of [...upstream, ...downstream]) if (!nodes.has(n.id)) nodes.set(n.id, n);
  return {
    nodes: [...nodes.values()],
    edges: [...upstream.map((n) => ({ source: n.id, target: self })), ...downstream.map((n) => ({ source: self, target: n.id }))],
  };
}
