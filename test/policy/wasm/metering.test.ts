import t from 'tap';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createLogger } from '../../../src/lib/logger.js';
import { ruleContextSchema, type RuleContext } from '../../../src/policy/wasm/abi.js';
import { compileRule } from '../../../src/policy/wasm/compile.js';
import { DEFAULT_FUEL, MAX_FUEL } from '../../../src/policy/wasm/fuel.js';
import { RuleInstance, Subject } from '../../../src/policy/wasm/instance.js';
import { meteredModule } from '../../../src/policy/wasm/metering.js';
import { admitRule, RuleModuleError } from '../../../src/policy/wasm/module-check.js';
import { declaredMemory } from '../../../src/policy/wasm/module-memory.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { WasmRules } from '../../../src/policy/wasm/wasm-rules.js';
import { ASSEMBLY, compileRules, shellCall, svc, textCall, wat } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

/** Rules written for these tests, each a way a rule could try to run without end. */
const SOURCES = {
  /** Recurses without bound on a `deep` tool call. */
  recursion: `
import { toolName } from "SDK";
export { svc_abi_version } from "SDK";
let sink: i32 = 0;
function down(n: i32): i32 {
  if (n == 0) return sink;
  const below = down(n - 1);
  sink += below & 1;
  return below + 1;
}
export function svc_evaluate(): i32 {
  if (toolName() == "deep") sink = down(i32.MAX_VALUE);
  return 0;
}`,
  /**
   * Recurses \`depth\` levels (an argument) through two functions calling each other, or through a
   * function reference (an indirect call): no loop anywhere, only calls.
   */
  calls: `
import { argument, toolName } from "SDK";
export { svc_abi_version } from "SDK";
let sink: i32 = 0;
function ping(n: i32): i32 { if (n <= 0) return sink; sink ^= n; return pong(n - 1) + 1; }
function pong(n: i32): i32 { if (n <= 0) return sink; sink += n; return ping(n - 1) + 1; }
let again: (n: i32) => i32 = (n: i32): i32 => 0;
function viaReference(n: i32): i32 { if (n <= 0) return sink; sink ^= n; return again(n - 1) + 1; }
export function svc_evaluate(): i32 {
  const depth = argument("depth");
  if (depth == null) return 0;
  again = viaReference;
  const n = I32.parseInt(depth);
  sink = toolName() == "indirect" ? viaReference(n) : ping(n);
  return 0;
}`,
  /** Spends the same fuel on every call (a fixed amount of work, no allocation), then allows; it reads the \`command\`, so calls that differ in it each run. */
  burn: `
import { argument } from "SDK";
export { svc_abi_version } from "SDK";
let sink: i32 = 0;
export function svc_evaluate(): i32 {
  argument("command");
  for (let i = 0; i < 200000; i++) sink = (sink * 31 + i) ^ (sink >>> 7);
  return sink == 123456789 ? 1 : 0;
}`,
  /** Allocates a buffer of the size asked for in the \`bytes\` argument: zero filling it is one bulk operation. */
  allocate: `
import { argument } from "SDK";
export { svc_abi_version } from "SDK";
let kept: ArrayBuffer | null = null;
export function svc_evaluate(): i32 {
  const size = argument("bytes");
  if (size != null) kept = new ArrayBuffer(I32.parseInt(size));
  return 0;
}`,
} as const;

async function compileSources<N extends keyof typeof SOURCES>(names: readonly N[]): Promise<Record<N, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-wasm-metering-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const sdk = relative(dir, join(ASSEMBLY, 'sdk/index')).replace(/\\/g, '/');
  const out = {} as Record<N, string>;
  for (const name of names) {
    const src = join(dir, `${name}.ts`);
    await writeFile(src, SOURCES[name].replaceAll('"SDK"', JSON.stringify(sdk)));
    out[name] = join(dir, `${name}.wasm`);
    await compileRule({ src, out: out[name], debug: false });
  }
  return out;
}

const examples = await compileRules(t, ['index', 'destructive-shell', 'latest-image', 'force-push', 'infinite-loop', 'loops-at-start']);
const own = await compileSources(['recursion', 'calls', 'burn', 'allocate']);
const bytesOf = async (path: string) => new Uint8Array(await readFile(path));
const bytesByName: Partial<Record<keyof typeof examples, Uint8Array>> = Object.fromEntries(await Promise.all(Object.entries(examples).map(async ([name, path]) => [name, await bytesOf(path)])));

function setOf(...rules: Array<[name: string, bytes: Uint8Array]>): RuleSetSnapshot {
  return buildSnapshot(rules.map(([name, bytes], i) => ({ name, priority: 10 * (i + 1), sha256: sha256(bytes), bytes })));
}

function runner(t: Tap.Test, opts: { fuel?: number; failurePolicy?: 'closed' | 'open' } = {}): WasmRuleRunner {
  const r = new WasmRuleRunner({ fuel: opts.fuel, memoryCapPages: 256, failurePolicy: opts.failurePolicy ?? 'closed', logger: createLogger('silent') });
  t.teardown(() => r.close());
  return r;
}

/** The metered module of a rule a runner has loaded, as a fresh instance with `fuel`. */
function meteredInstance(bytes: Uint8Array, fuel: number): RuleInstance {
  const metered = meteredModule(sha256(bytes));
  if (metered === undefined || 'error' in metered) throw new Error(`not metered: ${JSON.stringify(metered)}`);
  return new RuleInstance(metered.module, metered.memory, 256, fuel);
}

const request = (text: string): RuleContext => ruleContextSchema.parse({ kind: 'request', text });

/** A valid module with a name section binaryen refuses to read (V8 ignores custom sections it cannot parse). */
function withBrokenNameSection(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const name = Buffer.from('name');
  const payload = [name.length, ...name, 1, 5, 0xff, 0xff, 0xff];
  return new Uint8Array([...bytes, 0, payload.length, ...payload]);
}

const unreadable = withBrokenNameSection(await bytesOf(examples['destructive-shell']));
// One field_read of the text: the rest of the module's work is the same whatever the text.
const reader = wat(`(module
  (import "env" "memory" (memory 8))
  (import "svc" "field_read" (func $read (param i32 i32)))
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_evaluate") (result i32) (call $read (i32.const 7) (i32.const 0)) (i32.const 0)))`);
const atomics = wat(`(module
  (import "env" "memory" (memory 1))
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_evaluate") (result i32) (i32.atomic.load (i32.const 0))))`);
const reserved = wat(`(module
  (import "env" "memory" (memory 1))
  (func (export "__svc_set_fuel") (param i32))
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_evaluate") (result i32) (i32.const 0)))`);

// binaryen takes a while to load: every module this file uses is metered once, up front, in one worker.
await new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') }).check(
  setOf(
    ...(await Promise.all([...Object.entries(examples), ...Object.entries(own)].map(async ([name, path]) => [name, await bytesOf(path)] as [string, Uint8Array]))),
    ['unreadable', unreadable],
    ['reader', reader],
    ['atomics', atomics],
    ['reserved', reserved],
  ),
);

t.test('a rule that loops forever is stopped within its fuel, and the call gets the failure policy\'s answer', async (t) => {
  const loop = await bytesOf(examples['infinite-loop']);
  const guard = await bytesOf(examples['destructive-shell']);
  const set = setOf(['spinner', loop], ['guard', guard]);
  const spin = { ...shellCall('rm -rf /'), toolName: 'spin' };
  const closed = runner(t);
  const stopped = `it ran out of fuel (${DEFAULT_FUEL} units) and was stopped`;
  t.same(await closed.evaluate(set, spin), { action: 'block', rule: 'spinner', reason: `rule failed: ${stopped}`, failures: [{ rule: 'spinner', error: stopped }] });
  t.equal((await closed.evaluate(set, shellCall('ls'))).action, 'allow', 'other calls are judged as before');
  const open = runner(t, { failurePolicy: 'open' });
  t.same(await open.evaluate(set, spin), { action: 'block', rule: 'guard', reason: 'destructive shell command: recursive rm of /', failures: [{ rule: 'spinner', error: stopped }] });
  t.equal(closed.state().fuelExhausted + open.state().fuelExhausted, 2);

  const small = runner(t, { fuel: 100_000 });
  const d = await small.evaluate(set, spin);
  t.equal(d.reason, 'rule failed: it ran out of fuel (100000 units) and was stopped', 'the budget is the configured one');
});

t.test('deep recursion is stopped as a failure; the process and the next call carry on', async (t) => {
  const recursion = await bytesOf(own.recursion);
  const set = setOf(['recursion', recursion]);
  const deep = { ...shellCall('ls'), toolName: 'deep' };
  for (const fuel of [DEFAULT_FUEL, MAX_FUEL]) {
    const r = runner(t, { fuel });
    const d = await r.evaluate(set, deep);
    t.equal(d.action, 'block', `fuel ${fuel}: fail closed`);
    t.match(d.reason, /^rule failed: it (overflowed its stack: Maximum call stack size exceeded|ran out of fuel)/);
    t.equal((await r.evaluate(set, shellCall('ls'))).action, 'allow', 'a fresh instance serves the next call');
  }
  const unbounded = runner(t, { fuel: MAX_FUEL });
  t.match((await unbounded.evaluate(set, deep)).reason, /overflowed its stack/, 'with all the fuel there is, the stack runs out first');
});

t.test('calls pay too: recursion through two functions or a function reference, without a loop, runs out of fuel', async (t) => {
  const calls = await bytesOf(own.calls);
  const set = setOf(['calls', calls]);
  const deep = (toolName: string, depth: number) => ({ ...shellCall(''), toolName, toolArguments: JSON.stringify({ depth: String(depth) }) });
  const roomy = runner(t);
  const tight = runner(t, { fuel: 20_000 });
  for (const toolName of ['mutual', 'indirect']) {
    t.same((await roomy.evaluate(set, deep(toolName, 2000))).failures, [], `${toolName}: 2,000 levels fit the default fuel`);
    t.equal((await tight.evaluate(set, deep(toolName, 10))).action, 'allow', `${toolName}: 10 levels fit 20,000 units`);
    t.equal((await tight.evaluate(set, deep(toolName, 2000))).reason, 'rule failed: it ran out of fuel (20000 units) and was stopped', `${toolName}: 2,000 levels do not`);
  }
});

t.test('fuel is given afresh for every call', async (t) => {
  const burn = await bytesOf(own.burn);
  const set = setOf(['burn', burn]);
  await runner(t).check(set);
  const probe = meteredInstance(burn, MAX_FUEL);
  // Calls that differ, each run (the verdict of a call seen before is remembered, see the memo tests).
  probe.evaluate(new Subject(shellCall('ls a')));
  const perCall = probe.spent;
  probe.evaluate(new Subject(shellCall('ls b')));
  t.equal(probe.spent, perCall, 'the same work spends the same fuel');
  t.ok(perCall > 200_000, `one call spends ${perCall}`);

  const enough = runner(t, { fuel: Math.ceil(perCall * 1.5) });
  for (let i = 0; i < 5; i++) t.same(await enough.evaluate(set, shellCall(`ls ${i}`)), { action: 'allow', rule: null, reason: '', failures: [] }, `call ${i + 1}`);
  const short = runner(t, { fuel: Math.floor(perCall * 0.9) });
  t.match((await short.evaluate(set, shellCall('ls'))).reason, /ran out of fuel/, 'and a call that needs more than that is stopped');
});

t.test('bulk memory operations and the host accessors pay by size', async (t) => {
  const allocate = await bytesOf(own.allocate);
  await runner(t).check(setOf(['allocate', allocate]));
  const rule = meteredInstance(allocate, MAX_FUEL);
  const spend = (bytes: number) => {
    rule.evaluate(new Subject({ ...shellCall(''), toolArguments: JSON.stringify({ bytes: String(bytes) }) }));
    return rule.spent;
  };
  spend(16);
  const small = spend(17);
  const zeroFilled = spend(4 << 20) - small;
  t.ok(zeroFilled >= (4 << 20) / 16, `zero filling 4 MiB costs ${zeroFilled} (at least one unit per 16 bytes)`);

  const readers = runner(t);
  t.same(await readers.check(setOf(['reader', reader])), [{ kinds: 7, programs: null }]);
  const read = meteredInstance(reader, MAX_FUEL);
  read.evaluate(new Subject(request('x'.repeat(8))));
  const shortText = read.spent;
  read.evaluate(new Subject(request('x'.repeat(80_000))));
  t.equal(read.spent - shortText, 80_000 / 8 - 1, 'writing a field costs one unit per 8 UTF-16 units');
});

t.test('metering keeps every example rule\'s verdicts', async (t) => {
  const calls: RuleContext[] = [
    ...[
      'ls -la',
      'git status && ls -la src/ | head -n 20',
      'rm -rf /',
      'sudo -E env X=1 /bin/rm -rf --no-preserve-root /',
      'rm -rf \\\n /',
      'rm -rf ./build',
      'echo "rm -rf /"',
      'grep -r "rm -rf /" src',
      'kubectl set image deployment/api api=registry.example.com/api:latest',
      'kubectl set image deployment/api api=registry.example.com/api:1.4.2',
      'helm upgrade api ./chart --set image.tag=latest',
      'docker build -t api:latest .x',
      'git push --force origin main',
      'git -C repo push --force-with-lease origin HEAD:refs/heads/main',
      'git push origin main',
      'git push --force origin feature/x',
      'git push -f origin main; rm -rf /',
      `bash -lc 'git push -f origin main'`,
      'x'.repeat(3000),
    ].map((command) => shellCall(command)),
    { ...shellCall(''), toolName: 'deploy_service', toolArguments: JSON.stringify({ image: 'ghcr.io/acme/api' }) },
    { ...shellCall(''), toolName: 'deploy_service', toolArguments: JSON.stringify({ image: 'ghcr.io/acme/api@sha256:abc' }) },
    { ...shellCall(''), toolName: 'run', toolArguments: JSON.stringify({ cmd: ['bash', '-lc', 'rm -rf /'] }) },
    { ...shellCall(''), toolArguments: '{"command": "rm -rf /' },
    textCall('const r = await tools.exec_command({cmd: "git push --force origin main"}); text(r.output)'),
    textCall("await tools.exec_command({cmd: 'touch ok.txt'})"),
    textCall('await tools.exec_command({cmd: `rm -rf /`})'),
    request('please rm -rf /'),
  ];
  const r = runner(t);
  const PROGRAMS = { index: null, 'destructive-shell': ['rm'], 'latest-image': null, 'force-push': ['git'] };
  for (const name of ['index', 'destructive-shell', 'latest-image', 'force-push'] as const) {
    const bytes = await bytesOf(examples[name]);
    const set = setOf([name, bytes]);
    t.same(await r.check(set), [{ kinds: 2, programs: PROGRAMS[name] }]);
    const plain = new RuleInstance(new WebAssembly.Module(bytes), declaredMemory(bytes), 256, 0);
    t.notOk(plain.metered);
    const answers = { plain: [] as Array<{ action: string; reason: string }>, metered: [] as Array<{ action: string; reason: string }> };
    for (const call of calls) {
      // The plain instance runs on every call (the kinds a rule asks for are filtered by the caller);
      // the runner skips a rule on a tool call that cannot run a program it declares.
      answers.plain.push(plain.evaluate(new Subject(call)));
      const decision = await r.evaluate(set, call);
      t.same(decision.failures, []);
      answers.metered.push({ action: decision.action, reason: decision.reason });
    }
    t.same(answers.metered, answers.plain, `${name}: the same verdicts on ${calls.length} calls`);
    t.ok(answers.plain.filter((a) => a.action !== 'allow').length >= 3, `${name} refuses some of them`);
  }
});

t.test('the combined example rule splits a call\'s commands once, for all three checks', async (t) => {
  // 2,000 one-letter commands: splitting the line is nearly all of each check's work.
  const call = shellCall('x;'.repeat(2000));
  const spent = (name: keyof typeof examples) => {
    const instance = meteredInstance(bytesByName[name]!, MAX_FUEL);
    t.equal(instance.evaluate(new Subject(call)).action, 'allow');
    return instance.spent;
  };
  const single = Math.max(spent('destructive-shell'), spent('latest-image'), spent('force-push'));
  const combined = spent('index');
  t.ok(combined < 1.6 * single, `the three checks together spend ${combined}, one alone up to ${single}`);
  const decision = await runner(t).evaluate(setOf(['index', bytesByName.index!]), call);
  t.same(decision.failures, [], 'within the default fuel');
  t.equal(decision.action, 'allow');
});

t.test('a module binaryen cannot read, or that uses what is not metered, is refused at install and load', async (t) => {
  t.ok(WebAssembly.validate(unreadable), 'the engine itself would run it');
  await t.rejects(admitRule(unreadable, 'unreadable'), new RuleModuleError('unreadable cannot be loaded: it cannot be metered: binaryen cannot read it (error in parsing wasm binary)'));

  t.ok(WebAssembly.validate(atomics));
  await t.rejects(admitRule(atomics, 'atomics'), { message: /^atomics cannot be loaded: it cannot be metered: binaryen does not accept it with the features svc meters: .*atomic/i });
  await t.rejects(admitRule(reserved, 'reserved'), { message: 'reserved cannot be loaded: it cannot be metered: it exports __svc_set_fuel, a name the host reserves' });

  // The proxy's folder: the module is skipped with the reason, the others load.
  const dir = await mkdtemp(join(tmpdir(), 'svc-wasm-metering-dir-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, '10_unreadable.wasm'), unreadable);
  await writeFile(join(dir, '20_guard.wasm'), await bytesOf(examples['destructive-shell']));
  const rules = new WasmRules({ dir, rescanMs: 60_000, memoryMaxMb: 16, failurePolicy: 'closed', fuel: DEFAULT_FUEL, logger: createLogger('silent') });
  t.teardown(() => rules.close());
  await rules.start();
  const health = rules.health();
  t.same(health.failed, [{ file: '10_unreadable.wasm', error: 'it cannot be metered: binaryen cannot read it (error in parsing wasm binary)' }]);
  t.same(health.rules.map((r) => r.name), ['guard']);
  t.equal(health.fuel, DEFAULT_FUEL);

  // And the command line refuses to install it, writing nothing.
  const home = await mkdtemp(join(tmpdir(), 'svc-wasm-metering-cli-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const file = join(home, 'unreadable.wasm');
  await writeFile(file, unreadable);
  const env = { SVC_WASM_DIR: join(home, 'wasm'), SVC_HOME: join(home, 'home') };
  const res = await svc(['policy', 'install', '--wasm', file], env);
  t.equal(res.code, 2, res.stderr);
  t.match(res.stderr, /not installed: unreadable cannot be loaded: it cannot be metered: binaryen cannot read it/);
  t.match((await svc(['policy', 'list-local'], env)).stdout, /^no rules installed in /);
});

t.test('a rule stuck while starting is refused at load, by fuel', async (t) => {
  const r = runner(t, { fuel: 1_000_000 });
  const stuck = await bytesOf(examples['loops-at-start']);
  t.same(await r.check(setOf(['stuck', stuck])), [{ error: 'it ran out of fuel while starting (1000000 units) and was stopped' }]);
  await t.rejects(admitRule(stuck, 'stuck'), { message: `stuck cannot be loaded: it ran out of fuel while starting (${DEFAULT_FUEL} units) and was stopped` });
});
