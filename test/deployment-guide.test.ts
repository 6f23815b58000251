// docs/DEPLOYMENT.md stays true: every `jobhouse …` command in it is one the CLI knows, with
// options it accepts (the processes themselves run in server-start and distributed-processes).

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "./support/processes.js";

const guide = readFileSync(join(import.meta.dirname, "..", "docs", "DEPLOYMENT.md"), "utf8");
/** Command lines from the guide's code blocks and inline code: `jobhouse <words> [--options …]`. */
const commands = [...new Set([...guide.matchAll(/(?:^|`)jobhouse ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)((?: [^`\n]*)?)/gm)].map((m) => `${m[1]}|${m[2] ?? ""}`))];

describe("the deployment guide", () => {
  it("names commands", () => {
    expect(commands.length).toBeGreaterThanOrEqual(6);
  });

  // Found by trying the guide: systemd's EnvironmentFile keeps a comment after a value in the value.
  it("its environment lines carry no comment after the value", () => {
    const assignments = guide.split("\n").filter((line) => /^SERVICE_[A-Z_]+=/.test(line));
    expect(assignments.length).toBeGreaterThanOrEqual(5);
    for (const line of assignments) expect(line).not.toMatch(/\s#/);
  });

  it.each(commands)("%s is a command the CLI knows, with options it accepts", (entry) => {
    const [words, rest] = entry.split("|") as [string, string];
    // "worker stop <id>" and the like: arguments in angle brackets are not command words.
    const command = words.split(" ").filter((w) => !w.startsWith("<") && !w.startsWith("["));
    const help = spawnSync(process.execPath, [BIN, ...command, "--help"], { encoding: "utf8", timeout: 30_000 });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain(`Usage: jobhouse ${command.join(" ")}`);
    for (const option of rest.match(/--[a-z-]+/g) ?? []) expect(help.stdout, `${command.join(" ")} ${option}`).toContain(option);
  });
});
