import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { wasmDir } from '../policy/wasm/rule-files.js';

/**
 * The local skill and rule files (seed 002 "Inventory objects" and the `skill` commands): skill
 * bundles in `.agents/skills` and `.claude/skills` of a workspace folder and in `~/.claude/skills`
 * (one bundle per subfolder: its SKILL.md and every file under it), local WASM rules in
 * `SVC_WASM_DIR` or `~/.svc/wasm`, and the SOP files under `<workspace>/.svc/sops/`. Symbolic
 * links inside a bundle are not followed.
 */

/** Files listed per bundle at most (a folder past it is not a skill bundle anyone reads whole). */
export const MAX_FILES_PER_BUNDLE = 5000;

export function skillFolders(home: string, workspace: string): string[] {
  return [...new Set([join(workspace, '.agents', 'skills'), join(workspace, '.claude', 'skills'), join(home, '.claude', 'skills')])];
}

/** The regular files under `dir` (not following symbolic links), at most `limit`. */
export async function filesUnder(dir: string, limit = MAX_FILES_PER_BUNDLE): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (out.length >= limit) return;
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.isFile()) out.push(join(d, e.name));
    }
  };
  await walk(dir);
  return out;
}

export interface SkillBundle {
  readonly name: string;
  /** The skill folder it was found in. */
  readonly folder: string;
  readonly dir: string;
  /** Its SKILL.md, when it has one. */
  readonly description: string | null;
  /** Every regular file of the bundle, SKILL.md included. */
  readonly files: readonly string[];
}

export async function skillBundles(home: string, workspace: string): Promise<SkillBundle[]> {
  const out: SkillBundle[] = [];
  for (const folder of skillFolders(home, workspace)) {
    let bundles;
    try {
      bundles = (await readdir(folder, { withFileTypes: true })).filter((e) => e.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      continue;
    }
    for (const bundle of bundles) {
      const dir = join(folder, bundle.name);
      const files = await filesUnder(dir);
      const description = join(dir, 'SKILL.md');
      out.push({ name: bundle.name, folder, dir, description: files.includes(description) ? description : null, files });
    }
  }
  return out;
}

export interface LocalRuleFile {
  readonly kind: 'wasm' | 'sop';
  /** The folder it belongs to (the WASM rule folder or `.svc/sops`). */
  readonly folder: string;
  readonly path: string;
}

/** The local WASM rules (`*.wasm` in the rule folder) and every file under `<workspace>/.svc/sops/`. */
export async function localRuleFiles(workspace: string, env: NodeJS.ProcessEnv): Promise<LocalRuleFile[]> {
  const wasm = wasmDir(env);
  const sops = join(workspace, '.svc', 'sops');
  const out: LocalRuleFile[] = [];
  let names: string[] = [];
  try {
    if ((await stat(wasm)).isDirectory()) names = (await readdir(wasm)).filter((f) => f.endsWith('.wasm')).sort();
  } catch {
    // No rule folder.
  }
  for (const name of names) {
    const path = join(wasm, name);
    if ((await stat(path).catch(() => null))?.isFile() === true) out.push({ kind: 'wasm', folder: wasm, path });
  }
  for (const path of (await filesUnder(sops)).sort()) out.push({ kind: 'sop', folder: sops, path });
  return out;
}
