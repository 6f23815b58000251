// ?p=object&name=…: one data object: its facts, schema, lineage graph (upstream and downstream,
// each a link), column lineage and the SQL of every operation that made or appended to it.

import type { ObjectDetail } from "../../../src/models/index.js";
import { useApiQuery } from "../api/queries.js";
import { type GraphNode, GraphView } from "../components/Graph.js";
import { Link } from "../components/Link.js";
import { Empty, Loading, ViewError } from "../components/States.js";
import { Time } from "../components/Time.js";
import { formatBytes, formatCount } from "../lib/format.js";
import { hrefFor } from "../lib/route.js";

type LineageNode = ObjectDetail["lineage_summary"]["graph"]["nodes"][number];

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
  if (object.isError && !object.data) return <ViewError title="Object" error={object.error} what="object" />;
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
                <td>{(lineage.column_sources[c.name] ?? []).map((src) => `${src.name.split("/").pop()}.${src.column}`).join(", ") || <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Sources</h2>
      {lineage.sources.length === 0 ? (
        <p className="muted">No file, URL or other object is recorded as this object's source.</p>
      ) : (
        <ul className="sources" aria-label="Sources">
          {lineage.sources.map((source) => (
            <SourceItem key={source.key} source={source} />
          ))}
        </ul>
      )}
      <h2>Lineage</h2>
      {lineage.graph.nodes.length <= 1 && lineage.downstream_objects.length === 0 ? (
        <p className="muted">Nothing upstream or downstream is recorded for this object.</p>
      ) : (
        <>
          <GraphView label={`Lineage of ${o.name}`} direction="LR" {...lineageGraph(o)} />
          {lineage.graph.truncated ? <p className="muted">The upstream walk stopped at its bounds (64 operations deep, 1,000 nodes).</p> : null}
        </>
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

/**
 * What the object came from on the left, walked through dropped intermediates (marked "dropped")
 * to files, URLs and existing objects; what was made from it on the right. The same graph as
 * `data get` draws: the REST model's lineage_summary.graph.
 */
function lineageGraph(o: ObjectDetail): { nodes: GraphNode[]; edges: { source: string; target: string }[] } {
  const { graph, downstream_objects: downstream } = o.lineage_summary;
  const node = (n: LineageNode): GraphNode => {
    if (n.key === graph.root) return { id: n.key, label: o.name, detail: o.scope, emphasis: true };
    if (n.kind !== "object") return { id: n.key, label: n.name.split("/").pop() || n.name, detail: [n.kind, n.format, n.size_bytes === null ? null : formatBytes(n.size_bytes)].filter(Boolean).join(" · ") };
    const detail = [n.scope, n.operation, n.exists ? null : "dropped"].filter(Boolean).join(" · ");
    return { id: n.key, label: n.name, detail, ...(n.exists && n.id ? { href: hrefFor("object", { name: n.id }) } : {}) };
  };
  const nodes = new Map<string, GraphNode>(graph.nodes.map((n) => [n.key, node(n)]));
  const edges = graph.edges.map((e) => ({ source: e.from, target: e.to }));
  // An object both upstream and downstream (a table rebuilt from itself) is drawn once.
  for (const d of downstream) {
    const key = `object:${d.id}`;
    if (!nodes.has(key)) nodes.set(key, { id: key, label: d.name, detail: d.exists ? (d.scope ?? "") : "dropped", ...(d.exists ? { href: hrefFor("object", { name: d.id }) } : {}) });
    edges.push({ source: graph.root, target: key });
  }
  return { nodes: [...nodes.values()], edges };
}

/** A source in words: a file's path, a URL, or an existing object (a link). */
function SourceItem({ source }: { source: LineageNode }) {
  if (source.kind === "object") {
    return (
      <li>
        object <Link href={hrefFor("object", { name: source.id ?? source.name })}>{source.name}</Link> <span className="muted">({source.scope})</span>
      </li>
    );
  }
  return (
    <li>
      {source.kind} <code>{source.name}</code>{" "}
      <span className="muted">
        ({[source.format, source.size_bytes === null ? null : formatBytes(source.size_bytes)].filter(Boolean).join(", ")}
        {source.loaded_at ? (
          <>
            , loaded <Time iso={source.loaded_at} />
          </>
        ) : null}
        )
      </span>
    </li>
  );
}
