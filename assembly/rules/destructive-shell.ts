import { checkDestructiveShell } from "../checks/destructive-shell";
export { svc_abi_version } from "../sdk";

export function svc_evaluate(): i32 {
  return checkDestructiveShell();
}
