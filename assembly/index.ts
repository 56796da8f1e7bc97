// The default rule (`svc policy compile` with no --src): the three example checks in one module.
// Each also compiles alone from assembly/rules/.
import { shellCommands } from "./checks/command";
import { checkDestructiveShell } from "./checks/destructive-shell";
import { checkForcePush } from "./checks/force-push";
import { checkLatestImage } from "./checks/latest-image";
import { Kinds, Verdict } from "./sdk";
export { svc_abi_version } from "./sdk";

/** Only tool calls: requests never pay for this rule. */
export function svc_kinds(): i32 {
  return Kinds.ToolCall;
}

export function svc_evaluate(): i32 {
  // The call's commands are split once and handed to each check.
  const all = shellCommands();
  let verdict = checkDestructiveShell(all);
  if (verdict != Verdict.Allow) return verdict;
  verdict = checkLatestImage(all);
  if (verdict != Verdict.Allow) return verdict;
  return checkForcePush(all);
}
