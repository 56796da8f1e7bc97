import { argument, commandsInto, inputIsText, jsonStrings, Kind, kind, shellScript, textCommands } from "../sdk";

/** How deep shells started with `-c` inside one another are followed. */
const MAX_NESTED_SHELLS: i32 = 3;

/** Adds the commands of `line`, each followed by those of the shell script it starts, if any. */
function addLine(out: string[][], line: string, depth: i32): void {
  const first = out.length;
  commandsInto(line, out);
  followScripts(out, first, depth);
}

/** Puts right after each command of `out` from `first` on the commands of the shell script it starts, as the shell runs them. */
// @ts-ignore: decorator
@inline
function followScripts(out: string[][], first: i32, depth: i32): void {
  if (depth >= MAX_NESTED_SHELLS) return;
  for (let i = first; i < out.length; i++) {
    const script = shellScript(out[i]);
    if (script == null) continue;
    const rest = out.splice(i + 1, out.length - i - 1);
    addLine(out, script, depth + 1);
    i = out.length - 1;
    for (let j = 0; j < rest.length; j++) out.push(rest[j]);
  }
}

/** An argv array as the host passes a non-string argument: JSON text such as `["git","push"]`. */
function isArgv(value: string): bool {
  return value.startsWith('["') && value.endsWith('"]');
}

/**
 * The simple commands a tool call runs, each as its words: from its `command`, `cmd` or `script`
 * argument (a command line, or an argv array such as `["bash","-lc","…"]`), or, when its input is
 * raw text (code, a freeform tool), from each string literal in it that looks like a command. A
 * shell started with `-c` (`bash -lc 'git push -f origin main'`) adds the commands of its script.
 */
export function shellCommands(): string[][] {
  const out = new Array<string[]>();
  if (kind() != Kind.ToolCall) return out;
  // No argument is answered for a raw-text input, so the common case, a JSON object with a
  // command, never asks for the input's form.
  let command = argument("command");
  if (command == null) command = argument("cmd");
  if (command == null) command = argument("script");
  if (command != null) {
    if (isArgv(command)) {
      out.push(jsonStrings(command));
      followScripts(out, 0, 0);
    } else addLine(out, command, 0);
  } else if (inputIsText()) {
    const lines = textCommands();
    for (let i = 0; i < lines.length; i++) addLine(out, lines[i], 0);
  }
  return out;
}
