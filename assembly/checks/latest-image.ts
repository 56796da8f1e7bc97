// Refuses deploys of container images tagged `latest` (or untagged, which means latest): an
// `image` argument, or an image reference in a deploy command (kubectl, helm, docker, gcloud run…).
import { allow, argument, baseName, block, commandStart, Kind, kind, toolName } from "../sdk";

/** `repo/app:latest`, or `repo/app` with no tag and no digest. */
function isLatest(image: string): bool {
  if (image.length == 0 || image.includes("@")) return false;
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  if (colon <= slash) return true;
  return image.substring(colon + 1) == "latest";
}

/** A word that names an image tagged latest: `app:latest`, `--image=app:latest`, `image.tag=latest`. */
function namesLatest(word: string): bool {
  if (word.endsWith(":latest")) return true;
  const eq = word.lastIndexOf("=");
  if (eq < 0) return false;
  const key = word.substring(0, eq);
  const value = word.substring(eq + 1);
  if (value == "latest" && key.endsWith("tag")) return true;
  return (key == "--image" || key.endsWith("image")) && isLatest(value);
}

/** kubectl, helm, docker, podman, gcloud, flyctl, fly, nomad, skaffold, kustomize: by length first, as most words are none of them. */
function isDeployTool(program: string): bool {
  switch (program.length) {
    case 3:
      return program == "fly";
    case 4:
      return program == "helm";
    case 5:
      return program == "nomad";
    case 6:
      return program == "docker" || program == "podman" || program == "gcloud" || program == "flyctl";
    case 7:
      return program == "kubectl";
    case 8:
      return program == "skaffold";
    case 9:
      return program == "kustomize";
    default:
      return false;
  }
}

/** `all` is the call's `shellCommands()`. */
export function checkLatestImage(all: string[][]): i32 {
  if (kind() != Kind.ToolCall) return allow();
  const image = argument("image");
  if (image != null && toolName().toLowerCase().includes("deploy") && isLatest(image)) {
    return block("deploy of an unpinned image: " + image + " (pin a version tag or digest)");
  }
  for (let i = 0; i < all.length; i++) {
    const cmd = all[i];
    const start = commandStart(cmd);
    if (start < 0 || !isDeployTool(baseName(cmd[start]))) continue;
    for (let j = start + 1; j < cmd.length; j++) {
      if (namesLatest(cmd[j])) return block("deploy of an image tagged latest: " + cmd[j] + " (pin a version tag or digest)");
    }
  }
  return allow();
}
