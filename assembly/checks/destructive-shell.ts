// Refuses `rm -rf /` and its variants: -r/-R/--recursive in any flag cluster or order, through
// sudo/env/xargs, aimed at the filesystem root, the home folder or everything under them.
import { allow, baseName, block, commandStart } from "../sdk";

function isRootLike(target: string): bool {
  let t = target;
  while (t.length > 1 && t.endsWith("/")) t = t.substring(0, t.length - 1);
  return (
    t == "/" || t == "/*" || t == "/." || t == "/.." || t == "~" || t == "~/" || t == "~/*" || t == "$HOME" || t == "${HOME}" ||
    t == "$HOME/*" || t == "${HOME}/*" || t == "*" || t == "." || t == ".." || t == "./*"
  );
}

function isRecursiveFlag(word: string): bool {
  if (word == "--recursive") return true;
  if (!word.startsWith("-") || word.startsWith("--")) return false;
  return word.includes("r") || word.includes("R");
}

/** `all` is the call's `shellCommands()`. */
export function checkDestructiveShell(all: string[][]): i32 {
  for (let i = 0; i < all.length; i++) {
    const cmd = all[i];
    const start = commandStart(cmd);
    if (start < 0 || baseName(cmd[start]) != "rm") continue;
    let recursive = false;
    let rootTarget = "";
    let endOfOptions = false;
    for (let j = start + 1; j < cmd.length; j++) {
      const w = cmd[j];
      if (!endOfOptions && w == "--") {
        endOfOptions = true;
        continue;
      }
      if (!endOfOptions && w.startsWith("-")) {
        if (isRecursiveFlag(w)) recursive = true;
        continue;
      }
      if (isRootLike(w)) rootTarget = w;
    }
    if (recursive && rootTarget.length > 0) {
      return block("destructive shell command: recursive rm of " + rootTarget);
    }
  }
  return allow();
}
