import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CONTROL_PLANE_PREFIX as PREFIX, parseRuleFileName, ruleFileName, sha256 } from '../policy/wasm/rule-files.js';
import type { GatewayConfigDocument } from './sync-document.js';

export interface WasmSyncResult {
  written: string[];
  removed: string[];
}

/**
 * Makes the rules folder hold exactly the control plane's WASM rules beside the locally installed
 * ones: each written atomically (a temporary file renamed over it) when missing or changed, and
 * every `cp-` file the document no longer lists removed. The folder's watcher then reloads them.
 */
export async function materializeWasmRules(dir: string, rules: GatewayConfigDocument['config']['wasmRules']): Promise<WasmSyncResult> {
  await mkdir(dir, { recursive: true });
  const wanted = new Map(rules.map((r) => [ruleFileName(r.priority, PREFIX + r.name), r]));
  const present = (await readdir(dir)).filter((file) => parseRuleFileName(file)?.name.startsWith(PREFIX) === true).sort();
  const result: WasmSyncResult = { written: [], removed: [] };
  for (const [file, rule] of wanted) {
    const path = join(dir, file);
    if (present.includes(file) && (await readFile(path).then(sha256, () => null)) === rule.sha256) continue;
    const temp = join(dir, `.${file}.${process.pid}.tmp`);
    await writeFile(temp, Buffer.from(rule.wasm, 'base64'));
    await rename(temp, path);
    result.written.push(file);
  }
  for (const file of present) {
    if (wanted.has(file)) continue;
    await unlink(join(dir, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    result.removed.push(file);
  }
  return result;
}
