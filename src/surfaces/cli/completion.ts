// `jobhouse completion bash|zsh|fish`: a completion script generated from the command tree itself,
// so every command, subcommand and option the program has is offered, and nothing it lacks.

import type { Command } from "commander";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  /** Command words from the root, e.g. ["job", "get"]. */
  path: string[];
  subcommands: string[];
  options: string[];
  /** The values an option takes from a fixed set (`--status`, `-o`), by each of its spellings. */
  values: Array<[flag: string, choices: string[]]>;
}

function nodesOf(command: Command, path: string[] = []): Node[] {
  const spellings = (o: Command["options"][number]) => [o.long, o.short].filter((f): f is string => Boolean(f));
  const options = command.options.flatMap(spellings);
  const values = command.options.flatMap((o) => (o.argChoices?.length ? spellings(o).map((flag): [string, string[]] => [flag, o.argChoices!]) : []));
  const node = { path, subcommands: command.commands.map((c) => c.name()), options: [...options, "--help"], values };
  return [node, ...command.commands.flatMap((c) => nodesOf(c, [...path, c.name()]))];
}

const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/** Bash (and zsh through bashcompinit): the command words typed so far pick the candidates. */
function bash(name: string, nodes: Node[]): string {
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, "_")}_complete`;
  // After an option with a fixed set of values, those values; else the command's words and options.
  const valueCases = nodes.flatMap((n) => n.values.map(([flag, choices]) => `    ${quote(`${n.path.join(" ")}|${flag}`)}) words=${quote(choices.join(" "))} ;;`));
  const cases = nodes.map((n) => `    ${quote(n.path.join(" "))}) words=${quote([...n.subcommands, ...n.options].join(" "))} ;;`);
  const known = nodes.map((n) => quote(n.path.join(" "))).join(" ");
  return `# ${name} completion for bash: eval "$(${name} completion bash)"
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word i words=""
  local -a known=(${known})
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    local next="\${path:+$path }$word"
    for k in "\${known[@]}"; do [[ "$k" == "$next" ]] && path="$next" && break; done
  done
  case "$path|\${COMP_WORDS[COMP_CWORD - 1]}" in
${valueCases.join("\n")}
    *)
      case "$path" in
${cases.map((line) => "    " + line).join("\n")}
      esac ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F ${fn} ${name}
`;
}

function zsh(name: string, nodes: Node[]): string {
  return `# ${name} completion for zsh: eval "$(${name} completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bash(name, nodes).split("\n").slice(1).join("\n")}`;
}

/** Fish: each subcommand offered once its parent's words were typed, each option under its command. */
function fish(name: string, nodes: Node[]): string {
  const lines = [`# ${name} completion for fish: ${name} completion fish | source`, `complete -c ${name} -f`];
  for (const node of nodes) {
    const last = node.path[node.path.length - 1];
    const condition = node.path.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${last}`;
    for (const sub of node.subcommands) lines.push(`complete -c ${name} -n ${quote(condition)} -a ${quote(sub)}`);
    const valuesOf = new Map(node.values);
    for (const option of node.options) {
      if (!option.startsWith("--")) continue;
      const choices = valuesOf.get(option);
      lines.push(`complete -c ${name} -n ${quote(condition)} -l ${option.slice(2)}` + (choices ? ` -xa ${quote(choices.join(" "))}` : ""));
    }
  }
  return lines.join("\n") + "\n";
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes = nodesOf(program);
  const name = program.name();
  return shell === "bash" ? bash(name, nodes) : shell === "zsh" ? zsh(name, nodes) : fish(name, nodes);
}
