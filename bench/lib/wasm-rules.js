// @ts-check
/**
 * WASM rules for benchmarks: the example rules compiled once with asc and installed N times
 * (cycling through them) into a folder, as `svc policy install` would lay them out.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The tool call the rule benchmarks time: a benign shell command every example rule allows, which
 * runs no `rm` (so the `destructive-shell` copies, which declare it, are skipped).
 */
export const BENCH_RULE_CALL = {
  kind: 'tool_call',
  toolName: 'bash',
  toolArguments: JSON.stringify({ command: 'git status && ls -la src/ | head -n 20' }),
  toolInput: 'json',
  model: 'gpt-4o-mini',
  harness: 'claude-code',
  session: 's-1',
  workspace: 'bench',
  text: null,
};

/**
 * Throws unless a benchmark's first evaluation allowed the call with no rule failing: a timed
 * loop of blocks or failures would measure something else.
 * @param {{ action: string, failures: readonly unknown[] }} decision
 */
export function assertAllowed(decision) {
  if (decision.action !== 'allow' || decision.failures.length > 0) throw new Error(`the benchmark call was not allowed: ${JSON.stringify(decision)}`);
}

const ASSEMBLY = fileURLToPath(new URL('../../assembly/', import.meta.url));
const EXAMPLES = ['rules/destructive-shell.ts', 'rules/latest-image.ts', 'rules/force-push.ts', 'index.ts'];

/**
 * How a rule is built: `svc` as `svc policy compile` builds it (the stub runtime, rewound by the
 * host after each call), `incremental` with asc's default runtime and its garbage collector, as a
 * rule built by other means (the module then keeps its heap between calls).
 * @typedef {'svc' | 'incremental'} RuleBuild
 */

/**
 * Compiles the example rules into `dir`.
 * @param {string} dir
 * @param {RuleBuild} build
 * @returns {Promise<string[]>} the modules' paths
 */
async function compileExamples(dir, build) {
  const { compileRule } = await import('../../dist/policy/wasm/compile.js');
  const { default: asc } = await import('assemblyscript/asc');
  const out = [];
  for (const src of EXAMPLES) {
    const path = join(dir, src.replace(/[/.]/g, '_') + '.wasm');
    if (build === 'svc') await compileRule({ src: join(ASSEMBLY, src), out: path, debug: false });
    else {
      const result = await asc.main([join(ASSEMBLY, src), '--outFile', path, '--runtime', 'incremental', '--importMemory', '-O3', '--noAssert']);
      if (result.error) throw result.error;
    }
    out.push(path);
  }
  return out;
}

/**
 * A folder holding `count` installed rules, under `parent` (which the caller removes). Each copy
 * of an example is a module of its own, told apart by a custom section that numbers it: the proxy
 * keeps one instance per module, as it would for ten rules written apart.
 * @param {number} count
 * @param {string} [parent]
 * @param {RuleBuild} [build]
 * @returns {Promise<string>}
 */
export async function installedRulesDir(count, parent = tmpdir(), build = 'svc') {
  const work = await mkdtemp(join(parent, 'wasm-'));
  const modules = await Promise.all((await compileExamples(work, build)).map((path) => readFile(path)));
  const dir = join(work, 'installed');
  await mkdir(dir);
  for (let i = 0; i < count; i++) {
    const module = /** @type {Buffer} */ (modules[i % modules.length]);
    await writeFile(join(dir, `${100 + i}_rule${i}.wasm`), Buffer.concat([module, customSection('svc-bench-copy', String(i))]));
  }
  return dir;
}

/**
 * A WebAssembly custom section (id 0): what a module carries beside its code, ignored when it runs.
 * @param {string} name
 * @param {string} payload
 */
function customSection(name, payload) {
  const body = Buffer.concat([Buffer.from([Buffer.byteLength(name)]), Buffer.from(name), Buffer.from(payload)]);
  if (body.length > 127) throw new Error('a longer custom section needs a longer size');
  return Buffer.concat([Buffer.from([0, body.length]), body]);
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

