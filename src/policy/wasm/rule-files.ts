import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { svcHome } from '../../lib/paths.js';

/** Installed rules are `{priority}_{name}.wasm`; lower priorities run first. */
const RULE_FILE = /^(\d{1,6})_([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.wasm$/;
/** Names `svc policy install --name` accepts (the file name's name part). */
export const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const DEFAULT_PRIORITY = 100;
/** Rules a gateway takes from its control plane are named `cp-{name}`; local installs may not use it. */
export const CONTROL_PLANE_PREFIX = 'cp-';

/** Where rules are installed: `SVC_WASM_DIR`, else the configured folder, else `$SVC_HOME/wasm` (`~/.svc/wasm`). */
export function wasmDir(env: NodeJS.ProcessEnv = process.env, configured?: string): string {
  if (env.SVC_WASM_DIR && env.SVC_WASM_DIR.length > 0) return env.SVC_WASM_DIR;
  return configured ?? join(svcHome(env), 'wasm');
}

export function ruleFileName(priority: number, name: string): string {
  return `${priority}_${name}.wasm`;
}

export function parseRuleFileName(file: string): { priority: number; name: string } | null {
  const m = RULE_FILE.exec(file);
  return m === null ? null : { priority: Number(m[1]), name: m[2]! };
}

export interface RuleFile {
  readonly file: string;
  readonly path: string;
  readonly name: string;
  readonly priority: number;
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly sha256: string;
  readonly size: number;
  readonly mtime: Date;
  /** The file's inode, size, modification and change times when it was read, and when that was. */
  readonly stamp: string;
  readonly readAtMs: number;
}

/**
 * How long after a file last changed its timestamps are trusted to show any later change: file
 * times tick at the kernel's clock (a few ms), so a file rewritten at the same size within one
 * tick of being read keeps its stamp. A file read that soon after its change is read again.
 */
const STAMP_SETTLED_MS = 1000;

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The rule files in `dir` (none when it does not exist), in priority order. A file that vanishes
 * between listing and reading (a rule being replaced) is simply left out of this scan. A file of
 * `previous` (by path) whose stamp has not changed, and had settled when it was read, is taken as
 * it was instead of being read and hashed again.
 */
export async function readRuleFiles(dir: string, previous?: ReadonlyMap<string, RuleFile>): Promise<RuleFile[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: RuleFile[] = [];
  for (const file of entries) {
    const parsed = parseRuleFileName(file);
    if (parsed === null) continue;
    const path = join(dir, file);
    try {
      const info = await stat(path);
      const stamp = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      const known = previous?.get(path);
      if (known !== undefined && known.stamp === stamp && known.readAtMs - info.ctimeMs >= STAMP_SETTLED_MS) {
        out.push(known);
        continue;
      }
      const readAtMs = Date.now();
      const bytes = await readFile(path);
      // Stamped as it was before the read: a change during the read shows at the next scan.
      out.push({ file, path, ...parsed, bytes, sha256: sha256(bytes), size: bytes.length, mtime: info.mtime, stamp, readAtMs });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out.sort((a, b) => a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
