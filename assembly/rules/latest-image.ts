import { checkLatestImage } from "../checks/latest-image";
export { svc_abi_version } from "../sdk";

export function svc_evaluate(): i32 {
  return checkLatestImage();
}
