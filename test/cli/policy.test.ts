import t from 'tap';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { compileRules, svc } from '../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const work = await mkdtemp(join(tmpdir(), 'svc-policy-cli-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const rules = await compileRules(t, ['trap', 'wrong-abi', 'block-everything']);

async function fresh(t: Tap.Test): Promise<NodeJS.ProcessEnv> {
  const dir = await mkdtemp(join(work, 'case-'));
  return { SVC_WASM_DIR: join(dir, 'wasm'), SVC_HOME: join(dir, 'home') };
}

async function mockFile(context: unknown): Promise<string> {
  const path = join(await mkdtemp(join(work, 'mock-')), 'mock.json');
  await writeFile(path, JSON.stringify(context));
  return path;
}

const compiled = join(work, 'build', 'rule.wasm');

t.test('compile builds assembly/index.ts by default; --debug builds with debug information', async (t) => {
  const res = await svc(['policy', 'compile', '--out', compiled], {});
  t.equal(res.code, 0, res.stderr);
  t.match(res.stdout, /^compiled assembly\/index\.ts to .*rule\.wasm \(\d+ bytes, sha256 [0-9a-f]{12}\)/);
  const bytes = await readFile(compiled);
  t.ok(WebAssembly.validate(bytes), 'a valid module');
  const debugOut = join(work, 'build', 'debug.wasm');
  t.equal((await svc(['policy', 'compile', '--src', 'assembly/rules/force-push.ts', '--out', debugOut, '--debug'], {})).code, 0);
  t.ok((await readFile(debugOut)).includes(Buffer.from('sourceMappingURL')), 'the debug build names its source map');
  const broken = join(work, 'broken.ts');
  await writeFile(broken, 'export function svc_evaluate(): i32 { return nope; }\n');
  const failed = await svc(['policy', 'compile', '--src', broken, '--out', join(work, 'build', 'broken.wasm')], {});
  t.equal(failed.code, 2);
  t.match(failed.stderr, /compiling .*broken\.ts failed/);
  t.match(failed.stderr, /nope/, 'the compiler diagnostics are shown');
});

t.test('test prints the verdict; the exit code is 0 allow, 1 block, 3 hold', async (t) => {
  const env = await fresh(t);
  const cases: Array<[string, number, RegExp]> = [
    ['ls -la', 0, /^allow\n$/],
    ['rm -rf /', 1, /^block: destructive shell command: recursive rm of \/\n$/],
    ['git push --force origin main', 3, /^hold: force push to protected branch main needs approval\n$/],
  ];
  for (const [command, code, out] of cases) {
    const mock = await mockFile({ kind: 'tool_call', toolName: 'bash', toolArguments: { command } });
    const res = await svc(['policy', 'test', '--wasm', compiled, '--mock', mock], env);
    t.equal(res.code, code, command);
    t.match(res.stdout, out);
  }
  const invalid = await svc(['policy', 'test', '--wasm', compiled, '--mock', await mockFile({ kind: 'tool_call', model: 3 })], env);
  t.equal(invalid.code, 2);
  t.match(invalid.stderr, /invalid mock context .*model/);
  const missing = await svc(['policy', 'test', '--wasm', compiled], env);
  t.not(missing.code, 0);
  t.match(missing.stderr, /--mock/);
  const trapping = await svc(['policy', 'test', '--wasm', rules.trap, '--mock', await mockFile({ kind: 'request', text: 'hi' })], env);
  t.equal(trapping.code, 1, 'a failing rule fails closed');
  t.match(trapping.stderr, /rule failed: it trapped/);
});

t.test('test takes a raw-text tool input: commands in code are judged like plain ones', async (t) => {
  const env = await fresh(t);
  const cases: Array<[string, number, RegExp]> = [
    ['const r = await tools.exec_command({cmd: "git push --force origin main"}); text(r.output)', 3, /^hold: force push to protected branch main needs approval\n$/],
    ["const r = await tools.exec_command({cmd: 'touch ok.txt'}); text(r.output)", 0, /^allow\n$/],
    ['await tools.exec_command({cmd: `rm -rf /`})', 1, /^block: destructive shell command: recursive rm of \/\n$/],
  ];
  for (const [code, exit, out] of cases) {
    const mock = await mockFile({ kind: 'tool_call', toolName: 'exec', toolInput: 'text', toolArguments: code });
    const res = await svc(['policy', 'test', '--wasm', compiled, '--mock', mock], env);
    t.equal(res.code, exit, code);
    t.match(res.stdout, out);
  }
  const object = await svc(['policy', 'test', '--wasm', compiled, '--mock', await mockFile({ kind: 'tool_call', toolName: 'exec', toolInput: 'text', toolArguments: { cmd: 'ls' } })], env);
  t.equal(object.code, 2);
  t.match(object.stderr, /invalid mock context .*text input is given as a string/);
});

t.test('install writes {priority}_{name}.wasm atomically and list-local shows it', async (t) => {
  const env = await fresh(t);
  const res = await svc(['policy', 'install', '--wasm', compiled], env);
  t.equal(res.code, 0, res.stderr);
  t.match(res.stdout, /installed 100_rule\.wasm/);
  t.same(await readdir(env.SVC_WASM_DIR!), ['100_rule.wasm'], 'the default name is the file name, the default priority 100; no temp file left');
  t.equal((await svc(['policy', 'install', '--wasm', compiled, '--name', 'guard', '--priority', '7'], env)).code, 0);
  const list = await svc(['policy', 'list-local'], env);
  const sha = createHash('sha256').update(await readFile(compiled)).digest('hex').slice(0, 12);
  const size = (await readFile(compiled)).length;
  t.match(list.stdout, /^PRIORITY\s+NAME\s+SIZE\s+MTIME\s+SHA256\n/);
  const rows = list.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/));
  t.same(rows.map((r) => [r[0], r[1], r[2], r[4]]), [['7', 'guard', String(size), sha], ['100', 'rule', String(size), sha]]);
  t.match(rows[0]![3], /^\d{4}-\d\d-\d\dT/);
  t.equal((await svc(['policy', 'install', '--wasm', compiled, '--name', 'guard', '--priority', '50'], env)).code, 0);
  t.same((await readdir(env.SVC_WASM_DIR!)).sort(), ['100_rule.wasm', '50_guard.wasm'], 'reinstalling under a new priority replaces the rule');
});

t.test('install refuses a module that traps, speaks another ABI or refuses the allow context', async (t) => {
  const env = await fresh(t);
  const trap = await svc(['policy', 'install', '--wasm', rules.trap], env);
  t.equal(trap.code, 2);
  t.match(trap.stderr, /not installed: trap failed on the allow context: it trapped/);
  const abi = await svc(['policy', 'install', '--wasm', rules['wrong-abi']], env);
  t.match(abi.stderr, /not installed: .*ABI version 99; this host speaks 1/);
  const blocks = await svc(['policy', 'install', '--wasm', rules['block-everything']], env);
  t.match(blocks.stderr, /not installed: block-everything answers block \(this rule blocks everything\)/);
  const garbage = join(work, 'garbage.wasm');
  await writeFile(garbage, 'not wasm');
  t.match((await svc(['policy', 'install', '--wasm', garbage], env)).stderr, /not a valid WebAssembly module/);
  t.match((await svc(['policy', 'install', '--wasm', compiled, '--priority', 'high'], env)).stderr, /invalid option: priority/);
  t.match((await svc(['policy', 'install', '--wasm', compiled, '--name', '../escape'], env)).stderr, /invalid option: name/);
  t.match((await svc(['policy', 'install', '--wasm', compiled, '--name', 'cp-mine'], env)).stderr, /kept for rules from the control plane/);
  const list = await svc(['policy', 'list-local'], env);
  t.match(list.stdout, /^no rules installed in /, 'nothing was written');
});
