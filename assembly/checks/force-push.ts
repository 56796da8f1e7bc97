// Holds `git push --force` (also -f, --force-with-lease, a `+` refspec) to a protected branch
// (main, master, production, release/*) until a person approves it. A forced push that names no
// branch goes to whatever is checked out, which may be protected: it is held too.
import { allow, baseName, commandStart, hold } from "../sdk";

function isProtected(branch: string): bool {
  let b = branch;
  if (b.startsWith("refs/heads/")) b = b.substring(11);
  return b == "main" || b == "master" || b == "production" || b == "prod" || b.startsWith("release/");
}

/** The destination branch of a refspec: `HEAD:main` → main, `+main` → main. */
function destination(refspec: string): string {
  let r = refspec.startsWith("+") ? refspec.substring(1) : refspec;
  const colon = r.lastIndexOf(":");
  return colon < 0 ? r : r.substring(colon + 1);
}

/** git options that take a separate value (`git -C dir push`). */
function takesValue(option: string): bool {
  return option == "-C" || option == "-c" || option == "--git-dir" || option == "--work-tree" || option == "--namespace";
}

/** `all` is the call's `shellCommands()`. */
export function checkForcePush(all: string[][]): i32 {
  for (let i = 0; i < all.length; i++) {
    const cmd = all[i];
    const start = commandStart(cmd);
    if (start < 0 || baseName(cmd[start]) != "git") continue;
    let j = start + 1;
    while (j < cmd.length && cmd[j].startsWith("-")) j += takesValue(cmd[j]) ? 2 : 1;
    if (j >= cmd.length || cmd[j] != "push") continue;
    let force = false;
    const positional = new Array<string>();
    for (let k = j + 1; k < cmd.length; k++) {
      const w = cmd[k];
      if (w == "--force" || w == "-f" || w.startsWith("--force-with-lease") || w == "--force-if-includes") force = true;
      else if (w.startsWith("-") && !w.startsWith("--") && w.includes("f")) force = true;
      else if (!w.startsWith("-")) positional.push(w);
    }
    // positional[0] is the remote; the rest are refspecs.
    let target = "";
    for (let k = 1; k < positional.length; k++) {
      if (positional[k].startsWith("+")) force = true;
      if (isProtected(destination(positional[k]))) target = destination(positional[k]);
    }
    if (!force) continue;
    if (target.length > 0) return hold("force push to protected branch " + target + " needs approval");
    if (positional.length <= 1) return hold("force push without a named branch (the current branch may be protected) needs approval");
  }
  return allow();
}
