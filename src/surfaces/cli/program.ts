// The CLI generated from the operation registry (SPEC "Command-line surface"): one command per
// operation, options from its input schema, human output by default and `--json` for the REST body.

import { Command, InvalidArgumentError, Option } from "commander";
import { stringify as stringifyYaml } from "yaml";
import { visibleControls } from "../../core/control-chars.js";
import { EXIT_CODES, isServiceError, storeOutage, toProblem } from "../../core/errors.js";
import { type AnyOperation, checkInputBesides } from "../../operations/index.js";
import { coerceTextInput, inputSchemaOf } from "../../operations/schemas.js";
import { type WatchEvents, followJob, followTaskLog, resolveJobResult } from "./follow.js";
import { type LogPiece, logNotice, logPieceText, taskLogPieces } from "./task-log-text.js";
import { renderObjectWithLineage } from "./lineage-tree.js";
import { renderHuman } from "./render.js";
import type { ObjectDetail } from "../../models/objects.js";
import type { TaskLogsView } from "../../models/tasks.js";

/**
 * YAML that YAML 1.1 readers (PyYAML) read as JSON does: strings that 1.1 takes for timestamps,
 * booleans (`yes`, `n`) or numbers are quoted. Unquoted, a created_at was read as a datetime.
 */
const toYaml = (value: unknown) => stringifyYaml(value, { version: "1.1" }).trimEnd();

/** `-o, --output`: the human table, with every column, the REST body, or the same as YAML. */
const OUTPUT_FORMATS = ["table", "wide", "json", "yaml"];

/** `run-job --wait` saw the job end without completing; the CLI exits with EXIT_JOB_NOT_COMPLETED. */
export class JobNotCompleted extends Error {
  constructor(readonly status: string) {
    super(`job ended ${status}`);
  }
}

/** Runs one operation for the CLI: in-process, or over HTTP to a running local server. */
export type Caller = (op: AnyOperation, input: Record<string, unknown>) => Promise<unknown>;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Whether the reader of `out` has gone (a closed pipe: `… --follow | head -2`). */
  outClosed?(): boolean;
  isTty?: boolean;
  /** Statuses in colour in human output. */
  color?: boolean;
  /**
   * Makes sure something runs the job `--wait` follows (local mode with no server running: an
   * in-process worker); returns how to stop it.
   */
  ensureExecution?: () => Promise<() => Promise<void>>;
  /** One line of standard input, for a field the binding reads from there (CliBinding.stdin). */
  readLine?: () => Promise<string>;
  /** Where `--wait` and `--follow` hear of changes (the event stream); without it they poll. */
  watchEvents?: () => Promise<WatchEvents | undefined>;
}

/** Exit code of `run-job --wait` when the job ended FAILED or CANCELLED. */
export const EXIT_JOB_NOT_COMPLETED = EXIT_CODES.jobNotCompleted;

const kebab = (name: string) => name.replace(/_/g, "-");
const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The "Examples:" block of a command's --help. */
export const examplesHelp = (examples: readonly string[]) => `\nExamples:\n${examples.map((e) => `  $ ${e}`).join("\n")}`;

/**
 * An option that takes one value refuses a second: commander keeps the last, so `--kwargs A
 * --kwargs B` ran with B alone and said nothing (a usage error, exit 2).
 */
function givenOnce(option: Option): Option {
  const parse = option.parseArg;
  return option.argParser((value: string, previous: unknown) => {
    if (previous !== undefined) throw new InvalidArgumentError(`${option.long} is given twice: give it once`);
    return parse ? parse(value, previous) : value;
  });
}

/** Finds or creates the command group for the leading words of "job cancel <ref>". */
function groupFor(root: Command, words: string[]): Command {
  let parent = root;
  for (const word of words) {
    parent = parent.commands.find((c) => c.name() === word) ?? parent.command(word).description(`${word} commands`);
  }
  return parent;
}

export function addOperationCommands(program: Command, operations: readonly AnyOperation[], call: Caller, io: CliIo): void {
  for (const op of operations) {
    if (!op.cli) continue;
    const parts = op.cli.command.split(" ");
    // Words, then positional arguments: <required> or [optional].
    const isArgument = (part: string) => part.startsWith("<") || part.startsWith("[");
    const words = parts.filter((p) => !isArgument(p));
    const positional = parts.filter(isArgument);
    const args = positional.map((p) => p.slice(1, -1));
    const command = groupFor(program, words.slice(0, -1)).command(words[words.length - 1]!);
    command.summary(op.summary).description(op.summary + (op.description ? `.\n${op.description}` : ""));
    if (op.cli.examples?.length) command.addHelpText("after", examplesHelp(op.cli.examples));
    for (const arg of positional) command.argument(arg);

    const schema = inputSchemaOf(op);
    const required = new Set(schema.required ?? []);
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      if (args.includes(name)) continue;
      // A boolean that is false unless asked (replace) is a bare flag; others take true or false.
      const bareFlag = field.type === "boolean" && field.default === false;
      const flag = bareFlag ? `--${kebab(name)}` : `--${kebab(name)} <${field.type === "object" ? "json" : "value"}>`;
      const option = new Option(flag, String(field.description ?? name));
      // Listed for help and completion, but checked by the operation, as REST checks them: a value
      // outside them is invalid input (exit 4, its Problem printed with --json). Commander's own
      // check made it a usage error (exit 2) with nothing on standard output.
      if (Array.isArray(field.enum)) option.argChoices = field.enum.map(String);
      // A field read from standard input when its option is absent (a password) is never mandatory.
      if (required.has(name) && field.default === undefined && op.cli.stdin !== name) option.makeOptionMandatory();
      command.addOption(bareFlag ? option : givenOnce(option));
    }
    for (const [flag, { description }] of Object.entries(op.cli.flags ?? {})) command.option(`--${flag}`, description);
    command.option("--json", "print the JSON body exactly as the REST API returns it (--output json)");
    // -o as kubectl and docker spell it.
    command.addOption(givenOnce(new Option("-o, --output <format>", "table (the default), wide (every column), json (the REST body) or yaml").choices(OUTPUT_FORMATS)));
    command.option("--absolute", "times as written (ISO 8601, UTC) instead of relative (3m ago)");
    command.option("--no-headers", "tables without their header line and footer (for scripts)");
    if (op.cli.detailColumns) command.option("--wide", "every column of the tables below the fields, not the compact set");
    if (op.cli.follow) command.option("--wait", "follow the job until it ends, then print its result or error");
    if (op.cli.followLog) command.option("--follow", "print the log as it grows, until the task ends (with --json: one JSON object per line, {task_id, kind, attempt, text | bytes})");

    command.action(async (...received: unknown[]) => {
      const options = received[args.length] as Record<string, unknown>;
      const format = options.json ? "json" : ((options.output as string | undefined) ?? (options.wide ? "wide" : "table"));
      try {
        await runCommand(received, options, format);
      } catch (error) {
        // `--json` prints the REST body (CONTRACT §7), and a refusal's REST body is its Problem:
        // a script reading standard output got nothing. The line on stderr and the exit code stay.
        const refusal = storeOutage(error) ?? error;
        // One line where the output is one JSON object per line (--follow).
        const indent = options.follow ? undefined : 2;
        if ((format === "json" || format === "yaml") && isServiceError(refusal)) io.out(format === "json" ? JSON.stringify(toProblem(refusal), null, indent) : toYaml(toProblem(refusal)));
        throw error;
      }
    });

    async function runCommand(received: unknown[], options: Record<string, unknown>, format: string): Promise<void> {
      const input: Record<string, unknown> = {};
      args.forEach((arg, i) => {
        if (received[i] !== undefined) input[arg] = received[i];
      });
      for (const [flag, { field, value }] of Object.entries(op.cli!.flags ?? {})) if (options[camel(flag)]) input[field] = value;
      for (const name of Object.keys(schema.properties ?? {})) {
        const value = options[camel(name)];
        if (value !== undefined && !args.includes(name)) input[name] = value;
      }
      const fromStdin = op.cli!.stdin;
      if (fromStdin && input[fromStdin] === undefined && io.readLine) {
        // The other fields are refused before a password is asked for (a bad --role was refused after).
        checkInputBesides(op, coerceTextInput(op, input), fromStdin);
        input[fromStdin] = await io.readLine();
      }
      if (op.cli!.followLog && options.follow) {
        const { attempt } = coerceTextInput(op, input) as { attempt?: number };
        // Text for a person (each piece ends with a newline, which the output stream adds again);
        // with --json one JSON object per line, as a script reads a stream: it printed raw text.
        const write = format === "json" ? (piece: LogPiece) => io.out(JSON.stringify({ task_id: String(input.id), ...piece })) : printPiece;
        return followTaskLog(String(input.id), call, byName(), write, await io.watchEvents?.(), (line) => io.err(line), () => io.outClosed?.() ?? false, attempt);
      }
      const output = await call(op, coerceTextInput(op, input));
      if (op.cli!.follow && options.wait) return waitAndReport((output as { id: string }).id, format);
      // A 204's body is empty: --json prints nothing (it printed `null`), as the REST body is.
      if ((format === "json" || format === "yaml") && output === undefined) return;
      if (format === "json") return io.out(JSON.stringify(output, null, 2));
      if (format === "yaml") return io.out(toYaml(output));
      const renderOptions = { absolute: Boolean(options.absolute), headers: options.headers !== false, wide: format === "wide", color: io.color };
      if (op.cli!.view === "lineage") return io.out(renderObjectWithLineage(output as ObjectDetail, renderOptions));
      if (op.cli!.view === "log") return printLog(output as TaskLogsView);
      io.out(renderHuman(output, op.cli!, renderOptions));
    }
  }

  /** A piece of a log for a person; it ends with a newline, which the output stream adds again. */
  function printPiece(piece: LogPiece): void {
    io.out(logPieceText(piece).replace(/\n$/, ""));
  }

  /** A log's text on stdout, as `--follow` prints it; why there is none on stderr. */
  function printLog(view: TaskLogsView): void {
    const notice = logNotice(view);
    if (notice) io.err(notice);
    taskLogPieces(view).forEach(printPiece);
  }

  function byName(): ReadonlyMap<string, AnyOperation> {
    return new Map(operations.map((o) => [o.name, o]));
  }

  async function waitAndReport(jobId: string, format: string): Promise<void> {
    const operationsByName = byName();
    const stopExecution = (await io.ensureExecution?.()) ?? (async () => undefined);
    // The id first: whatever happens to this command, the job can be found and followed again.
    io.err(`Job ${jobId} started; following it (jobhouse job get ${jobId})`);
    let job;
    try {
      const progress = (text: string, sameLine: boolean) => (sameLine ? io.err(`\r\x1b[2K${text}`) : io.err(text));
      job = await followJob(jobId, call, operationsByName, { out: io.out, isTty: Boolean(io.isTty), progress, notice: (text) => io.err(text) }, await io.watchEvents?.());
    } finally {
      await stopExecution();
    }
    // The job's result with task references followed: what the human form prints as "result:".
    const result = job.status === "COMPLETED" ? await resolveJobResult(job, call, operationsByName) : null;
    // --output json and yaml print the job with its result, as the other commands print their body.
    if (format === "json") io.out(JSON.stringify({ ...job, result }, null, 2));
    else if (format === "yaml") io.out(toYaml({ ...job, result }));
    else if (job.status === "COMPLETED") io.out(`Job ${job.id} (${job.name}) COMPLETED in ${job.duration_ms ?? 0} ms\nresult: ${JSON.stringify(result, null, 2)}`);
    else {
      // The task the job's error names (its first failure), not the first FAILED in creation order.
      const named = /\((\d+)\) failed: /.exec(job.error ?? "")?.[1];
      const failed = job.tasks.find((t) => t.id === named) ?? job.tasks.find((t) => t.status === "FAILED");
      io.err(`Job ${job.id} (${visibleControls(job.name)}) ${job.status}: ${visibleControls(job.error ?? "no error recorded")}` + (failed ? `\nits log: jobhouse task logs ${failed.id}` : ""));
    }
    if (job.status !== "COMPLETED") throw new JobNotCompleted(job.status);
  }
}
