// The CLI: --json equals the REST body, exit codes per CONTRACT §7, readable human output.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runCli } from "../src/app/cli.js";
import { operations } from "../src/operations/index.js";
import { forEachBackend } from "./support/backends.js";
import { runAndWait, waitForTask, withEngine } from "./support/engine.js";
import { addObject } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";
import { BIN, freePort } from "./support/processes.js";

describe("the jobhouse process", () => {
  // `jobhouse … | head -1`: the reader is gone before the command writes. The process finishes
  // with its own exit code instead of crashing on EPIPE with a stack trace (exit 1).
  it("exits with its own code when its reader has gone", async () => {
    const child = spawn(process.execPath, [BIN, "completion", "bash"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(err).toBe("");
    expect(code).toBe(0);
  });
});

forEachBackend("CLI", (backend) => {
  let h: Harness;
  let jobId: string;
  beforeAll(async () => {
    h = await startHarness(backend);
    await h.call("register_job", { entrypoint: "test/fixtures/jobs.ts:hello", name: "etl", schedule: "0 6 * * *", defaults: { region: "eu" } });
    jobId = ((await h.call("run_job", { name: "etl" })) as { id: string }).id;
    await addObject(h, "orders", "global", 4);
  });
  afterAll(() => h?.close());

  it("--json prints exactly the REST body", async () => {
    for (const [argv, path] of [
      [["job", "list"], "/api/v0/jobs"],
      [["job", "get", jobId], `/api/v0/jobs/${jobId}`],
      [["registered-job", "list"], "/api/v0/registered-jobs"],
      [["worker", "list"], "/api/v0/workers"],
      [["data", "get", "orders"], "/api/v0/objects/orders"],
    ] as [string[], string][]) {
      const cli = await h.cli(...argv, "--json");
      expect(cli.code, cli.err).toBe(0);
      const rest = await h.http("GET", path);
      const masked = (v: unknown) => JSON.stringify(v).replace(/"duration_ms":\d+/, "");
      expect(masked(JSON.parse(cli.out))).toEqual(masked(rest.body));
    }
  });

  it("prints tables for lists and labelled fields for details", async () => {
    const list = await h.cli("job", "list");
    expect(list.out).toMatch(/^ID\s+NAME\s+STATUS/m);
    expect(list.out).toContain(jobId);
    expect(list.out).toMatch(/1 of 1/);
    const detail = await h.cli("job", "get", jobId);
    expect(detail.out).toMatch(/^status:\s+PENDING$/m);
    expect(detail.out).toMatch(/^tasks:$/m);
    const object = await h.cli("data", "get", "orders");
    expect(object.out).toMatch(/^row_count:\s+4$/m);
  });

  it("--output yaml is the REST body as YAML; --output json is --json; a bad format is a usage error", async () => {
    const json = await h.cli("registered-job", "list", "--json");
    const yaml = await h.cli("registered-job", "list", "--output", "yaml");
    expect(yaml.code, yaml.err).toBe(0);
    expect(parseYaml(yaml.out)).toEqual(JSON.parse(json.out));
    // Read as YAML 1.1 (PyYAML) reads it, timestamps and yes/no are still strings (found by trying
    // the product: created_at was read as a datetime).
    expect(parseYaml(yaml.out, { version: "1.1" })).toEqual(JSON.parse(json.out));
    expect(yaml.out).toMatch(/created_at: "\d{4}-/);
    expect((await h.cli("registered-job", "list", "--output", "json")).out).toBe(json.out);
    expect((await h.cli("registered-job", "list", "-o", "json")).out).toBe(json.out);
    expect((await h.cli("registered-job", "list", "-o", "yaml")).out).toBe(yaml.out);
    // A schedule is read in its zone: the table shows it (found by trying the product).
    expect((await h.cli("registered-job", "list")).out).toMatch(/^NAME\s+ENTRYPOINT\s+SCHEDULE\s+TIMEZONE\s+ENABLED/m);
    const bad = await h.cli("registered-job", "list", "--output", "xml");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/Allowed choices are table, wide, json, yaml/);
  });

  // Found by trying the product: a 204 printed `null` with --json; the REST body is empty.
  it("--json of an operation without a body prints nothing", async () => {
    await addObject(h, "json_empty_body", "global", 1);
    const deleted = await h.cli("data", "delete", "json_empty_body", "--json");
    expect(deleted.code, deleted.err).toBe(0);
    expect(deleted.out).toBe("");
  });

  // SPEC: --json on every command group, the setup commands (setup, migrate) included.
  it("setup and migrate print JSON with --json", async () => {
    for (const argv of [["setup"], ["migrate"]]) {
      const cli = await h.cli(...argv, "--json");
      expect(cli.code, `${argv.join(" ")}: ${cli.err}`).toBe(0);
      expect(JSON.parse(cli.out)).toMatchObject({ migrations_applied: [] });
    }
  });

  // Opening the service migrates a fresh schema on the way; migrate and setup reported that as nothing applied.
  for (const command of ["migrate", "setup"]) {
    it(`${command} names every migration it applies to a fresh schema, then none`, async () => {
      const fresh = await backend.freshEnv();
      try {
        const run = async () => {
          let out = "";
          const code = await runCli([command, "--json"], { env: fresh, streams: { out: (t) => void (out += t), err: () => undefined } });
          return { code, applied: (JSON.parse(out) as { migrations_applied: string[] }).migrations_applied };
        };
        const first = await run();
        expect(first.code).toBe(0);
        expect(first.applied).toContain("001-initial");
        expect(first.applied.length).toBeGreaterThan(1);
        expect((await run()).applied).toEqual([]);
      } finally {
        await backend.dispose(fresh);
      }
    });
  }

  it("completion scripts: bash completes commands, subcommands and options from the program itself", async () => {
    const script = await h.cli("completion", "bash");
    expect(script.code, script.err).toBe(0);
    const complete = (...words: string[]) =>
      execFileSync("bash", ["-c", `eval "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _jobhouse_complete; echo "\${COMPREPLY[*]}"`, "_", script.out], { encoding: "utf8" }).trim();
    expect(complete("jobhouse", "ru")).toBe("run-job");
    expect(complete("jobhouse", "job", "").split(" ")).toEqual(expect.arrayContaining(["list", "get", "stats", "cancel"]));
    expect(complete("jobhouse", "job", "get", "123", "--ab")).toBe("--absolute");
    // An option's fixed values (found by trying the product: none were offered).
    expect(complete("jobhouse", "job", "list", "--status", "FA")).toBe("FAILED");
    expect(complete("jobhouse", "job", "list", "-o", "").split(" ")).toEqual(["table", "wide", "json", "yaml"]);
    expect(complete("jobhouse", "job", "list", "--status", "FAILED", "--li")).toBe("--limit");
    expect((await h.cli("completion", "fish")).out).toContain("-l status -xa 'PENDING RUNNING");
    for (const shell of ["zsh", "fish"]) expect((await h.cli("completion", shell)).out).toContain("run-job");
    expect((await h.cli("completion", "powershell")).code).toBe(2);
  });

  it("every command's --help ends with examples", async () => {
    for (const op of operations) if (op.cli) expect(op.cli.examples?.length, op.name).toBeGreaterThan(0);
    for (const argv of [["task", "logs"], ["job", "list"], ["local", "start"], ["server", "start"], ["worker", "start"], ["background", "start"], ["migrate"], ["completion"]]) {
      const help = await h.cli(...argv, "--help");
      expect(help.out, argv.join(" ")).toMatch(/\nExamples:\n {2}\$ .*jobhouse /);
    }
  });

  it("prints one line for a mutation", async () => {
    const run = await h.cli("run-job", "etl", "--kwargs", '{"region":"us"}');
    expect(run.code).toBe(0);
    expect(run.out.trim()).toMatch(/^Started job \d+ \(etl\): PENDING$/);
    const job = (await h.http("GET", "/api/v0/jobs/etl")).body as { id: string };
    const detail = (await h.http("GET", `/api/v0/jobs/${job.id}`)).body as { kwargs: unknown };
    expect(detail.kwargs).toEqual({ region: "us" });
    const cancel = await h.cli("job", "cancel", job.id);
    expect(cancel.out.trim()).toBe(`Cancelled job ${job.id} (etl)`);
  });

  it("exit codes: 1 not found, 2 usage, 3 conflict, 4 invalid", async () => {
    const notFound = await h.cli("job", "get", "999999");
    expect(notFound.code).toBe(1);
    expect(notFound.err).toMatch(/error: job 999999 does not exist \(not_found\)/);
    expect((await h.cli("job", "frobnicate")).code).toBe(2);
    const missing = await h.cli("job", "get");
    expect(missing.code).toBe(2);
    // The error and a pointer to help, not the whole help text.
    expect(missing.err.trim().split("\n")).toEqual(["error: missing required argument 'ref'", "(add --help for usage)"]);
    expect(missing.out).not.toMatch(/Usage:/);
    // A value outside a field's choices is invalid input, as REST's 422 (found by trying the
    // product: it was a usage error, exit 2, with nothing on standard output under --json).
    const badStatus = await h.cli("job", "list", "--status", "DONE", "--json");
    expect(badStatus.code).toBe(4);
    expect(JSON.parse(badStatus.out)).toMatchObject({ status: 422, code: "invalid" });
    expect(badStatus.err).toMatch(/^error: status: .*"FAILED"/);
    expect((await h.cli("register-job", "test/fixtures/jobs.ts:hello", "--name", "etl")).code).toBe(3);
    const invalid = await h.cli("job", "list", "--limit", "0");
    expect(invalid.code).toBe(4);
    expect(invalid.err).toMatch(/limit/);
    expect((await h.cli("run-job", "etl", "--kwargs", "[1]")).code).toBe(4);
    // Found by trying the product: the last of two values ran, and nothing was said.
    const twice = await h.cli("run-job", "etl", "--kwargs", '{"region":"us"}', "--kwargs", '{"region":"eu"}');
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/--kwargs is given twice: give it once/);
    expect((await h.cli("job", "list", "-o", "json", "--output", "yaml")).code).toBe(2);
  });

  // Found by trying the product: --json printed a refusal as text on stderr only, so a script
  // reading standard output got nothing where REST's body is the Problem (CONTRACT §7).
  it("--json prints a refusal's Problem, as REST's body is, with the line on stderr and the exit code", async () => {
    const missing = await h.cli("job", "get", "999999", "--json");
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toEqual({ title: "Not Found", status: 404, detail: "job 999999 does not exist", code: "not_found" });
    expect(missing.err).toMatch(/error: job 999999 does not exist \(not_found\)/);
    const rest = await h.http("GET", "/api/v0/jobs/999999");
    expect(JSON.parse(missing.out)).toEqual(rest.body);
    const refused = await h.cli("job", "list", "--limit", "0", "-o", "yaml");
    expect(refused.code).toBe(4);
    expect(refused.out).toMatch(/^title: .*\nstatus: 422\n/);
    // A usage error is the CLI's own, with no REST body.
    const usage = await h.cli("job", "get", "--json");
    expect(usage.code).toBe(2);
    expect(usage.out).toBe("");
  });

  // Found by trying the product: a mistyped SERVICE_HOME made an empty store, and commands then
  // said "(none)" or "not found" with nothing pointing at the home.
  it.runIf(backend.name === "local")("says so when a command makes a new, empty store", async () => {
    const home = mkdtempSync(join(tmpdir(), "jobhouse-mistyped-"));
    const list = async () => {
      let err = "";
      const env = { ...h.env, SERVICE_HOME: home, SERVICE_SQL_URL: undefined };
      const code = await runCli(["job", "list"], { env, streams: { out: () => undefined, err: (t) => void (err += t + "\n") } });
      return { code, err };
    };
    try {
      const first = await list();
      expect(first.code).toBe(0);
      expect(first.err).toContain(`note: made a new store at ${join(home, "local.db")}: nothing was there yet (is SERVICE_HOME, now ${home}, the one you meant?)`);
      expect(await list()).toEqual({ code: 0, err: "" });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("--help works everywhere and exits 0", async () => {
    for (const argv of [["--help"], ["job", "--help"], ["job", "list", "--help"], ["data", "purge", "--help"], ["local", "start", "--help"]]) {
      const result = await h.cli(...argv);
      expect(result.code, argv.join(" ")).toBe(0);
      expect(result.out).toMatch(/Usage: jobhouse/);
    }
    // help of a subcommand is that subcommand's, not its group's.
    const help = await h.cli("help", "job", "list");
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: jobhouse job list \[options\]/);
  });

  // Reported as skipped on the distributed backend, not as a pass that checked nothing.
  it.runIf(backend.name === "local")("worker start and background start refuse local mode clearly", async () => {
    const worker = await h.cli("worker", "start");
    expect(worker.code).toBe(4);
    expect(worker.err).toMatch(/distributed mode/);
    expect((await h.cli("background", "start")).code).toBe(4);
  });
});

forEachBackend("CLI run-job --wait", (backend) => {
  let h: Harness;
  let engine: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    h = await startHarness(backend);
    // Local mode with no server running: the CLI runs the job itself. Distributed: a worker does.
    if (backend.name === "distributed") engine = await withEngine(h);
  });
  afterAll(async () => {
    await engine?.stop();
    await h?.close();
  });

  it("follows a job to its end and prints the result", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":5}', "--wait");
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^Job \d+ \(pipeline\) COMPLETED in \d+ ms\nresult: 16\n$/);
    expect(run.err).toMatch(/COMPLETED: 3 of 3 tasks completed/);
  });

  // Found by trying the product: the progress counted the first page of tasks ("1000 of 1000").
  it("counts every task of a job larger than one page of tasks", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:fanOut", "--kwargs", '{"n":1100}', "--wait");
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/COMPLETED: 1102 of 1102 tasks completed/);
    expect(run.out).toMatch(/result: 1211100\n$/);
    // `job get` shows one page of its tasks, and says so (found by trying the product: it showed
    // 1,000 rows and nothing under them).
    const jobId = /^Job (\d+)/.exec(run.out)![1]!;
    const shown = await h.cli("job", "get", jobId);
    expect(shown.out).toMatch(/^ {2}1000 of 1102 tasks \(next page: --tasks-cursor \S+\)$/m);
    const cursor = /--tasks-cursor (\S+)\)$/m.exec(shown.out)![1]!;
    const rest = await h.cli("job", "get", jobId, "--tasks-cursor", cursor);
    expect(rest.code, rest.err).toBe(0);
    expect(rest.out).not.toMatch(/next page/);
  });

  it("exits non-zero with the error when the job fails, naming the job first and the failed task's log", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:failing", "--wait");
    expect(run.code).toBe(6);
    expect(run.err).toMatch(/^Job (\d+) started; following it \(jobhouse job get \1\)\n/);
    expect(run.err).toMatch(/FAILED: task boom \((\d+)\) failed: the answer was not 42\nits log: jobhouse task logs \1\n/);
  });

  it("names the log of the task the job's error names, not the first failed task in creation order", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:twoFailures", "--wait");
    expect(run.code).toBe(6);
    // (boom fails first when both run at once; with one slot late_boom does, and is named.)
    expect(run.err).toMatch(/FAILED: task \w+ \((\d+)\) failed: [^\n]*\nits log: jobhouse task logs \1\n/);
  });

  it("task logs --follow prints the log as it grows, each line once, and ends with the task", async () => {
    // Local mode: this process runs the task (as a local server would); distributed: the worker above.
    const runner = backend.name === "local" ? await withEngine(h) : undefined;
    try {
      const job = (await h.call("run_job", { name: "test/fixtures/jobs.ts:talkerJob", kwargs: { lines: 4, everyMs: 80, waitMs: 200 } })) as { id: string };
      const task = await waitForTask(h, job.id, "talker");
      const followed = await h.cli("task", "logs", task.id, "--follow");
      expect(followed.code, followed.err).toBe(0);
      for (let i = 1; i <= 4; i++) expect(followed.out.match(new RegExp(`INFO line ${i} `, "g")), followed.out).toHaveLength(1);
      expect(((await h.call("get_task", { id: task.id })) as { status: string }).status).toBe("COMPLETED");
    } finally {
      await runner?.stop();
    }
  });

  // Found by trying the product: --follow ignored --attempt (it followed the latest attempt, and
  // an attempt that never was exited 0), and following a task no worker started said nothing.
  it("task logs --follow --attempt N follows that attempt; one past the task's is not found", async () => {
    const runner = backend.name === "local" ? await withEngine(h) : undefined;
    let retried: { id: string };
    try {
      const flaky = await runAndWait(h, "test/fixtures/jobs.ts:flaky", { failures: 2 });
      retried = flaky.tasks.find((t) => t.attempt === 3)!;
    } finally {
      await runner?.stop();
    }
    const first = await h.cli("task", "logs", retried.id, "--follow", "--attempt", "1");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain("flaky failure on attempt 1");
    expect(first.out).not.toContain("attempt 3 of");
    const never = await h.cli("task", "logs", retried.id, "--follow", "--attempt", "9");
    expect(never.code).toBe(1);
    expect(never.err).toContain("has no attempt 9");
    // Found by trying the product: --json printed the raw log text. It is one object per line.
    const json = await h.cli("task", "logs", retried.id, "--follow", "--json");
    expect(json.code, json.err).toBe(0);
    const pieces = json.out.trim().split("\n").map((line) => JSON.parse(line) as { task_id: string; kind: string; attempt: number; text?: string });
    expect(pieces.length).toBeGreaterThan(0);
    expect(pieces.every((p) => p.task_id === retried.id && p.kind === "text" && p.attempt === 3)).toBe(true);
    expect(pieces.map((p) => p.text).join("")).toContain("attempt 3 of");
  });

  // Found by trying the product: `task logs` printed the log as a `content:` field of a detail,
  // and a log past 1 MiB began mid-way with nothing saying bytes were left out.
  it("task logs prints the log as text, marking where a truncated log's shown part starts", async () => {
    const runner = backend.name === "local" ? await withEngine(h) : undefined;
    let short, long;
    try {
      short = (await runAndWait(h, "test/fixtures/jobs.ts:talkerJob", { lines: 2, everyMs: 0 })).tasks.find((t) => t.name === "talker")!;
      long = (await runAndWait(h, "test/fixtures/jobs.ts:talkerJob", { lines: 12, everyMs: 0, width: 100_000 })).tasks.find((t) => t.name === "talker")!;
    } finally {
      await runner?.stop();
    }
    const plain = await h.cli("task", "logs", short.id);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toMatch(/^\S+ INFO attempt 1 of \d+ of test\/fixtures\/jobs\.ts:talker started on worker \d+\n\S+ INFO line 1 \n\S+ INFO line 2 \n\S+ INFO completed in \d+ ms\n$/);
    expect(plain.err).toBe("");
    const cut = await h.cli("task", "logs", long.id);
    expect(cut.code, cut.err).toBe(0);
    const view = (await h.call("get_task_logs", { id: long.id })) as { size_bytes: number; content: string; truncated: boolean };
    expect(view.truncated).toBe(true);
    const skipped = view.size_bytes - Buffer.byteLength(view.content);
    expect(cut.out.startsWith(`[... ${skipped} bytes not shown: see the log file ...]\n`)).toBe(true);
    expect(cut.out).toMatch(/INFO completed in \d+ ms\n$/);
    // A task no worker started (local: none runs now): nothing on stdout, and why on stderr.
    if (backend.name === "local") {
      const pending = (await h.call("run_job", { name: "test/fixtures/jobs.ts:hello" })) as { id: string };
      const waiting = (await h.call("get_job", { ref: pending.id })) as { tasks: Array<{ id: string; status: string }> };
      const none = await h.cli("task", "logs", waiting.tasks[0]!.id);
      expect(none.code).toBe(0);
      expect(none.out).toBe("");
      expect(none.err).toMatch(/has not started: its log begins when a worker starts it/);
    }
  });

  it("says invalid JSON for --kwargs that is not JSON", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", "{n:2");
    expect(run.code).toBe(4);
    expect(run.err).toMatch(/kwargs: invalid JSON \(/);
    const rounded = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":12345678901234567890}');
    expect(rounded.code).toBe(4);
    expect(rounded.err).toMatch(/kwargs: the number 12345678901234567890 is an integer past 2\^53/);
    // Found by trying the product: a prototype key was dropped in silence (the job ran with {}).
    for (const [option, json] of [["--kwargs", '{"__proto__":{"polluted":1}}'], ["--kwargs", '{"a":[{"constructor":{"prototype":{}}}]}']]) {
      const poisoned = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", option!, json!);
      expect(poisoned.code, json).toBe(4);
      expect(poisoned.err, json).toContain('kwargs: a key "__proto__", or "constructor" holding "prototype", is refused');
    }
  });

  it("--wait --json prints the final job body with its result", async () => {
    const run = await h.cli("run-job", "test/fixtures/jobs.ts:hello", "--wait", "--json");
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ name: "hello", status: "COMPLETED", tasks: [{ status: "COMPLETED" }], result: "hello world" });
    // A result reached through task references is followed, as the human form does.
    const chained = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":5}', "--wait", "--json");
    expect(JSON.parse(chained.out)).toMatchObject({ status: "COMPLETED", result: 16 });
    // At any depth: {"sum": {"task_id": …}} was printed as the reference.
    const nested = await h.cli("run-job", "test/fixtures/jobs.ts:nestedResult", "--wait", "--json");
    expect(JSON.parse(nested.out)).toMatchObject({ status: "COMPLETED", result: { sum: 3, list: [4], plain: 7 } });
    // -o yaml printed the human lines instead.
    const yaml = await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":5}', "--wait", "-o", "yaml");
    expect(yaml.code, yaml.err).toBe(0);
    expect(parseYaml(yaml.out)).toMatchObject({ name: "pipeline", status: "COMPLETED", result: 16 });
  });

  // Found by trying the product: plain data shaped like a reference was followed, printing another
  // job's task result, or failing with "task 1 does not exist" for a job that had completed.
  it("prints a result that is plain data shaped like a task reference as the data it is", async () => {
    const other = JSON.parse((await h.cli("run-job", "test/fixtures/jobs.ts:pipeline", "--kwargs", '{"n":5}', "--wait", "--json")).out) as { tasks: { id: string }[] };
    for (const id of [other.tasks[0]!.id, "1"]) {
      const run = await h.cli("run-job", "test/fixtures/jobs.ts:giveBack", "--kwargs", JSON.stringify({ v: { task_id: id } }), "--wait", "--json");
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out)).toMatchObject({ status: "COMPLETED", result: { task_id: id } });
    }
  });
});

describe("the CLI with a local server that does not answer", () => {
  // server.json names a live process (here this one) whose address nobody serves: a hung server, or
  // its pid taken by another process after a crash. This was "unexpected failure: fetch failed".
  it("says so in one line, exit 10", async () => {
    const home = mkdtempSync(join(tmpdir(), "jobhouse-deaf-"));
    try {
      const url = `http://127.0.0.1:${await freePort()}`;
      writeFileSync(join(home, "server.json"), JSON.stringify({ url, pid: process.pid, secret: "x" }));
      const err: string[] = [];
      const code = await runCli(["job", "cancel", "1"], { env: { SERVICE_HOME: home }, streams: { out: () => undefined, err: (t) => err.push(t) } });
      expect(code).toBe(10);
      expect(err).toEqual([`error: the local server recorded in server.json at ${url} does not answer (ECONNREFUSED): restart it with \`jobhouse local start\` (server_unreachable)`]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
