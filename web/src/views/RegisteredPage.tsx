// ?p=registered: registered jobs with their schedule in words and next run, filtered by a name
// prefix and state; admins enable, disable and run one now with arguments edited as JSON (checked
// here, validated by the server).

import { useCallback, useState } from "react";
import type { JobView, PageOf, RegisteredJobView } from "../../../src/models/index.js";
import { useIsAdmin } from "../api/context.js";
import { JsonText } from "../api/client.js";
import { queryString, useApiMutation, useApiQuery } from "../api/queries.js";
import { PagedList } from "../components/PagedList.js";
import { usePager } from "../components/Pager.js";
import { Empty, MutationError } from "../components/States.js";
import { Status } from "../components/Status.js";
import { Time } from "../components/Time.js";
import { describeCron } from "../lib/cron.js";
import { type KwargsJsonSchema, parseKwargs, schemaProblems } from "../lib/kwargs.js";
import { hrefFor, navigate, useSearchParam } from "../lib/route.js";

const STATES: [label: string, value: string][] = [
  ["Enabled or disabled", ""],
  ["Enabled", "true"],
  ["Disabled", "false"],
];

export function RegisteredPage() {
  const isAdmin = useIsAdmin();
  const pager = usePager();
  const [running, setRunning] = useState<string | null>(null);
  // The filters live in the address, as the jobs view's: a filtered list reloads as it is.
  const [nameParam, setName] = useSearchParam("name");
  const [enabledParam, setEnabled] = useSearchParam("enabled");
  const name = nameParam ?? "";
  const enabled = enabledParam === "true" || enabledParam === "false" ? enabledParam : "";
  const filtered = name.trim() !== "" || enabled !== "";
  const list = useApiQuery<PageOf<RegisteredJobView>>("/registered-jobs" + queryString({ name: name.trim(), enabled, limit: 50, cursor: pager.cursor }));
  const toggle = useApiMutation<{ name: string; enable: boolean }>("POST", ({ name, enable }) => `/registered-jobs/${encodeURIComponent(name)}/${enable ? "enable" : "disable"}`);

  return (
    <section>
      <header className="view-header">
        <h1>Registered jobs</h1>
      </header>
      <form className="filters" role="search" aria-label="Filter registered jobs" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name
          <input type="search" value={name} placeholder="name starts with" onChange={(e) => (setName(e.target.value), pager.reset())} />
        </label>
        <label>
          State
          <select value={enabled} onChange={(e) => (setEnabled(e.target.value === "" ? null : e.target.value), pager.reset())}>
            {STATES.map(([label, value]) => (
              <option key={label} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <MutationError error={toggle.error} />
      <PagedList query={list} what="registered jobs" pager={pager}
        empty={
          filtered ? (
            <Empty title="No registered job matches these filters">Clear a filter to see more.</Empty>
          ) : (
            <Empty title="No registered jobs">
              Register one with <code>jobhouse register-job examples/sales.ts:salesPipeline --schedule "0 2 * * *"</code>.
            </Empty>
          )
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next run</th>
                <th scope="col">State</th>
                <th scope="col">Entrypoint</th>
                {isAdmin ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {items.map((job) => (
                <RegisteredRow
                  key={job.name}
                  job={job}
                  isAdmin={isAdmin}
                  editing={running === job.name}
                  onRun={() => setRunning(running === job.name ? null : job.name)}
                  onToggle={() => toggle.mutate({ name: job.name, enable: !job.enabled })}
                  toggling={toggle.isPending}
                />
              ))}
            </tbody>
          </table>
        )}
      </PagedList>
    </section>
  );
}

interface RowProps {
  job: RegisteredJobView;
  isAdmin: boolean;
  editing: boolean;
  toggling: boolean;
  onRun(): void;
  onToggle(): void;
}

function RegisteredRow({ job, isAdmin, editing, toggling, onRun, onToggle }: RowProps) {
  return (
    <>
      <tr>
        <td>
          <strong>{job.name}</strong>
        </td>
        <td>
          {describeCron(job.schedule)}
          {job.schedule ? (
            <span className="muted">
              {" "}
              (<code>{job.schedule}</code>
              {job.timezone ? `, ${job.timezone}` : ", UTC"})
            </span>
          ) : null}
        </td>
        <td>{job.enabled && job.next_run_at ? <Time iso={job.next_run_at} /> : <span className="muted">—</span>}</td>
        <td>
          <Status value={job.enabled ? "ENABLED" : "DISABLED"} />
          {job.max_active_runs ? (
            <div className="muted" title={`At most ${job.max_active_runs} run(s) at once; a scheduled fire beyond it is ${job.overlap === "skip" ? "skipped" : "queued"}`}>
              ≤ {job.max_active_runs} at once{job.overlap === "skip" ? ", skips" : ""}
            </div>
          ) : null}
          {job.on_failure ? (
            <div className="muted" title={`Failed runs are posted to ${job.on_failure}`}>
              notifies on failure
            </div>
          ) : null}
        </td>
        <td>
          <code>{job.entrypoint}</code>
        </td>
        {isAdmin ? (
          <td className="row-actions">
            <button type="button" aria-expanded={editing} aria-label={`Run now: ${job.name}`} onClick={onRun}>
              Run now
            </button>
            <button type="button" aria-label={`${job.enabled ? "Disable" : "Enable"} ${job.name}`} onClick={onToggle} disabled={toggling}>
              {job.enabled ? "Disable" : "Enable"}
            </button>
          </td>
        ) : null}
      </tr>
      {isAdmin && editing ? (
        <tr className="editor-row">
          <td colSpan={6}>
            <RunNow job={job} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

function RunNow({ job }: { job: RegisteredJobView }) {
  const [text, setText] = useState(() => JSON.stringify(job.defaults, null, 2));
  const parsed = parseKwargs(text);
  // Opened by its button: the arguments are what comes next (focus stayed on the button).
  const focusOnOpen = useCallback((box: HTMLTextAreaElement | null) => box?.focus({ preventScroll: true }), []);
  const schema = job.kwargs_schema as KwargsJsonSchema | null;
  const problems = parsed.ok ? schemaProblems(parsed.value, schema, job.defaults) : [parsed.problem];
  // The arguments go as typed (checked above to be one JSON object), not parsed and written again.
  const run = useApiMutation<string, JobView>("POST", () => "/jobs:run", (kwargs) => new JsonText(`{"name":${JSON.stringify(job.name)},"kwargs":${kwargs.trim() === "" ? "{}" : kwargs}}`));
  return (
    <form
      className="run-now"
      onSubmit={(e) => {
        e.preventDefault();
        if (parsed.ok && problems.length === 0) run.mutate(text, { onSuccess: (created) => navigate(hrefFor("job", { id: created.id })) });
      }}
    >
      <label htmlFor={`kwargs-${job.name}`}>Arguments (JSON object; the registered defaults are merged under them)</label>
      <textarea
        ref={focusOnOpen}
        id={`kwargs-${job.name}`}
        value={text}
        rows={Math.min(12, Math.max(3, text.split("\n").length))}
        spellCheck={false}
        aria-invalid={!parsed.ok}
        aria-describedby={`kwargs-${job.name}-problem`}
        onChange={(e) => setText(e.target.value)}
      />
      <div id={`kwargs-${job.name}-problem`}>
        {problems.length === 0 ? (
          <p className="muted">{schema ? "Fits the job's schema." : "Valid JSON (the job declares no schema)."}</p>
        ) : (
          <ul className="inline-error" role="alert">
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        )}
      </div>
      {schema?.properties ? <SchemaFields schema={schema} /> : null}
      <button type="submit" disabled={problems.length > 0 || run.isPending}>
        Start run of {job.name}
      </button>
      <MutationError error={run.error} />
    </form>
  );
}

/** The job's arguments as its schema declares them: name, type, whether required, default. */
function SchemaFields({ schema }: { schema: KwargsJsonSchema }) {
  const required = new Set(schema.required ?? []);
  return (
    <table className="schema-fields" aria-label="Arguments of the job">
      <thead>
        <tr>
          <th scope="col">Argument</th>
          <th scope="col">Type</th>
          <th scope="col">Required</th>
          <th scope="col">Default</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(schema.properties ?? {}).map(([name, property]) => (
          <tr key={name}>
            <td>
              <code>{name}</code>
              {property.description ? <span className="muted"> {property.description}</span> : null}
            </td>
            <td>
              {property.enum ? property.enum.map((c) => JSON.stringify(c)).join(" | ") : [property.type ?? "any"].flat().join(" | ")}
              {property.minimum !== undefined ? `, ≥ ${property.minimum}` : ""}
              {property.maximum !== undefined ? `, ≤ ${property.maximum}` : ""}
            </td>
            <td>{required.has(name) ? "yes" : "no"}</td>
            <td>{property.default !== undefined ? <code>{JSON.stringify(property.default)}</code> : <span className="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
