import { checkForcePush } from "../checks/force-push";
import { shellCommands } from "../checks/command";
import { Kinds } from "../sdk";
export { svc_abi_version } from "../sdk";

/** Only tool calls: requests never pay for this rule. */
export function svc_kinds(): i32 {
  return Kinds.ToolCall;
}

/** It judges only commands that run `git`: the host never runs it on a tool call that cannot. */
export function svc_programs(): string {
  return "git";
}

export function svc_evaluate(): i32 {
  return checkForcePush(shellCommands());
}
