import { checkForcePush } from "../checks/force-push";
export { svc_abi_version } from "../sdk";

export function svc_evaluate(): i32 {
  return checkForcePush();
}
