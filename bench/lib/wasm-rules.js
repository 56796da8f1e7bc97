// @ts-check
/**
 * WASM rules for benchmarks: the example rules compiled once with asc and installed N times
 * (cycling through them) into a folder, as `svc policy install` would lay them out.
 */
import { copyFile, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ASSEMBLY = fileURLToPath(new URL('../../assembly/', import.meta.url));
const EXAMPLES = ['rules/destructive-shell.ts', 'rules/latest-image.ts', 'rules/force-push.ts', 'index.ts'];

/**
 * Compiles the example rules into `dir`.
 * @param {string} dir
 * @returns {Promise<string[]>} the modules' paths
 */
async function compileExamples(dir) {
  const { compileRule } = await import('../../dist/policy/wasm/compile.js');
  const out = [];
  for (const src of EXAMPLES) {
    const path = join(dir, src.replace(/[/.]/g, '_') + '.wasm');
    await compileRule({ src: join(ASSEMBLY, src), out: path, debug: false });
    out.push(path);
  }
  return out;
}

/**
 * A folder holding `count` installed rules, under `parent` (which the caller removes).
 * @param {number} count
 * @param {string} [parent]
 * @returns {Promise<string>}
 */
export async function installedRulesDir(count, parent = tmpdir()) {
  const work = await mkdtemp(join(parent, 'wasm-'));
  const modules = await compileExamples(work);
  const dir = join(work, 'installed');
  await mkdir(dir);
  for (let i = 0; i < count; i++) await copyFile(/** @type {string} */ (modules[i % modules.length]), join(dir, `${100 + i}_rule${i}.wasm`));
  return dir;
}

/**
 * The rules of a folder made by `installedRulesDir`, read back as the proxy would load them.
 * @param {string} dir
 */
export async function readInstalled(dir) {
  const { readRuleFiles } = await import('../../dist/policy/wasm/rule-files.js');
  const files = await readRuleFiles(dir);
  return files.map((f) => ({ name: f.name, priority: f.priority, sha256: f.sha256, bytes: f.bytes }));
}

