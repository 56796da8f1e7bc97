import { argument, Kind, kind } from "../sdk";

/** The shell command a tool call runs (its `command`, `cmd` or `script` argument), or null. */
export function shellCommand(): string | null {
  if (kind() != Kind.ToolCall) return null;
  let command = argument("command");
  if (command == null) command = argument("cmd");
  if (command == null) command = argument("script");
  return command;
}
