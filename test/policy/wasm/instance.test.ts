import t from 'tap';
import binaryen from 'binaryen';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '../../../src/lib/logger.js';
import { ARENA_TOP_EXPORT } from '../../../src/policy/wasm/abi.js';
import { RuleInstance, Subject } from '../../../src/policy/wasm/instance.js';
import { meterModule } from '../../../src/policy/wasm/meter.js';
import { declaredMemory } from '../../../src/policy/wasm/module-memory.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { ASSEMBLY, compileRules, compileWithAsc, shellCall, wat } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const rules = await compileRules(t, ['remembers', 'allocates', 'index', 'reads-arguments', 'big-heap', 'reads-named-argument']);
/** The same rule as asc builds it by default: the incremental runtime, which frees, and so is not rewound. */
const collected = await compileWithAsc(t, 'remembers', ['--runtime', 'incremental', '--importMemory', '-O3', '--noAssert']);

async function setOf(name: string, path: string): Promise<RuleSetSnapshot> {
  const bytes = new Uint8Array(await readFile(path));
  return buildSnapshot([{ name, priority: 10, sha256: sha256(bytes), bytes }]);
}

function runner(t: Tap.Test, memoryCapPages = 256) {
  const r = new WasmRuleRunner({ fuel: 5_000_000, memoryCapPages, failurePolicy: 'closed', logger: createLogger('silent') });
  t.teardown(() => r.close());
  return r;
}

t.test('svc policy compile builds rules on the stub runtime and marks them as arena rules', async (t) => {
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(await readFile(rules.index))).map((e) => e.name);
  t.ok(exports.includes(ARENA_TOP_EXPORT));
  const collectedExports = WebAssembly.Module.exports(new WebAssembly.Module(await readFile(collected))).map((e) => e.name);
  t.notOk(collectedExports.includes(ARENA_TOP_EXPORT), 'a rule built otherwise is not one');
});

t.test('every call of an arena rule starts from the state the rule started in', async (t) => {
  const r = runner(t);
  const set = await setOf('remembers', rules.remembers);
  const tools = ['bash', 'read_file', 'write_file', 'bash'];
  for (let i = 0; i < 400; i++) {
    const tool = tools[i % tools.length]!;
    const d = await r.evaluate(set, { ...shellCall(`ls ${i}`), toolName: tool });
    const known = tool === 'bash' ? 2 : tool === 'read_file' ? 1 : 0;
    // Its counter, its list and its table, built on first use, are as they were after it started: nothing of call i - 1 is left.
    if (d.reason !== `calls=1 seen=${tool} known=${known}`) return t.fail(`call ${i}: ${d.reason}`);
  }
  t.pass('400 calls, each as if the first');
});

t.test('a rule built with a runtime that frees keeps its state between calls, as before', async (t) => {
  const r = runner(t);
  const set = await setOf('remembers', collected);
  t.equal((await r.evaluate(set, shellCall('ls'))).reason, 'calls=1 seen=bash known=2');
  t.equal((await r.evaluate(set, { ...shellCall('ls'), toolName: 'read_file' })).reason, 'calls=2 seen=bash,read_file known=1');
  t.equal((await r.evaluate(set, shellCall('ls'))).reason, 'calls=3 seen=bash,read_file,bash known=2', 'a call seen before runs again: its verdict is not remembered');
});

t.test('what an arena rule allocates in a call is given back when it ends', async (t) => {
  // 1 MiB a call against a cap of 4 MiB: without the rewind the fourth call would fail.
  const r = runner(t, 64);
  const set = await setOf('allocates', rules.allocates);
  for (let i = 0; i < 50; i++) {
    const d = await r.evaluate(set, shellCall(`ls ${i}`));
    if (d.action !== 'allow' || d.failures.length > 0) return t.fail(`call ${i}: ${JSON.stringify(d)}`);
  }
  t.same(r.state(), { completed: 50, fuelExhausted: 0, instances: 1, remembered: 0 }, 'one instance served them all');
});

t.test('a call that writes into an arena rule\'s started state pays for putting it back, one unit per 16 bytes; a call that does not, pays nothing', async (t) => {
  const set = await setOf('big-heap', rules['big-heap']);
  // 1 MiB below its heap's end: 65,536 units for a call that writes there, on top of its own few.
  const roomy = new WasmRuleRunner({ fuel: 100_000, memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
  const tight = new WasmRuleRunner({ fuel: 60_000, memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
  t.teardown(() => Promise.all([roomy.close(), tight.close()]));
  const allowed = { action: 'allow', rule: null, reason: '', failures: [] };
  t.same(await roomy.evaluate(set, shellCall('ls', 'scribble')), allowed);
  const stopped = await tight.evaluate(set, shellCall('ls', 'scribble'));
  t.equal(stopped.reason, 'rule failed: it ran out of fuel (60000 units) and was stopped', 'it started within 60,000 units, but a call that wrote below its heap cannot be put back within them');
  for (let i = 0; i < 3; i++) t.same(await tight.evaluate(set, shellCall(`ls ${i}`)), allowed, 'a call that wrote nothing there is not copied back, and not charged for it');
});

// An arena rule by hand: its heap ends at 1024. Each call blocks when bytes 16–23 are not as the
// rule started (all zero), then writes there in the way the length of the tool's name chooses.
const writer = wat(`(module
  (import "env" "memory" (memory 1))
  (import "svc" "field_length" (func $length (param i32) (result i32)))
  (import "svc" "field_read" (func $read (param i32 i32)))
  (data $ones "\\01\\01\\01\\01")
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_arena_top") (result i32) (i32.const 1024))
  (func (export "svc_evaluate") (result i32)
    (local $way i32) (local $left i64)
    (local.set $left (i64.load (i32.const 16)))
    (local.set $way (call $length (i32.const 1)))
    (i64.store (i32.const 2000) (i64.const -1))
    (if (i32.eq (local.get $way) (i32.const 1)) (then (i32.store8 (i32.const 16) (i32.const 1))))
    (if (i32.eq (local.get $way) (i32.const 2)) (then (i32.store offset=4 (i32.const 16) (i32.const 1))))
    (if (i32.eq (local.get $way) (i32.const 3)) (then (memory.fill (i32.const 16) (i32.const 1) (i32.const 8))))
    (if (i32.eq (local.get $way) (i32.const 4)) (then (memory.copy (i32.const 16) (i32.const 2000) (i32.const 8))))
    (if (i32.eq (local.get $way) (i32.const 5)) (then (memory.init $ones (i32.const 16) (i32.const 0) (i32.const 4))))
    (if (i32.eq (local.get $way) (i32.const 6)) (then (v128.store8_lane 3 (i32.const 16) (v128.const i8x16 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1))))
    (if (i32.eq (local.get $way) (i32.const 7)) (then (call $read (i32.const 1) (i32.const 16))))
    (if (i32.eqz (i64.eqz (local.get $left))) (then (return (i32.const 1))))
    (i32.const 0)))`, binaryen.Features.BulkMemory | binaryen.Features.SIMD128);

t.test('every way a call can write into an arena rule\'s started state is put back', async (t) => {
  const r = runner(t);
  const set = buildSnapshot([{ name: 'writer', priority: 10, sha256: sha256(writer), bytes: writer }]);
  const ways = ['a store', 'a store at an offset', 'memory.fill', 'memory.copy', 'memory.init', 'a SIMD lane store', 'the host writing a field'];
  for (const [i, way] of ways.entries()) {
    const tool = 'x'.repeat(i + 1);
    t.equal((await r.evaluate(set, shellCall('ls', tool))).action, 'allow', `${way}: the call starts from the started state`);
    t.equal((await r.evaluate(set, shellCall('ls', `probe-tool-${i}`))).action, 'allow', `${way}: the next call starts from it too`);
  }
});

// An arena rule by hand whose heap ends at 1024, with a 64-bit global: each call blocks unless the
// 16 bytes below its heap's end and the global are as it started, then writes over the ones the
// length of the tool's name chooses (1: those 16 bytes; 2: a byte far below them; else none).
const tailWriter = wat(`(module
  (import "env" "memory" (memory 1))
  (import "svc" "field_length" (func $length (param i32) (result i32)))
  (global $count (mut i64) (i64.const 0))
  (data (i32.const 1008) "\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07\\07")
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_arena_top") (result i32) (i32.const 1024))
  (func (export "svc_evaluate") (result i32)
    (local $way i32)
    (if (i64.ne (i64.load (i32.const 1008)) (i64.const 0x0707070707070707)) (then (return (i32.const 1))))
    (if (i64.ne (i64.load (i32.const 1016)) (i64.const 0x0707070707070707)) (then (return (i32.const 1))))
    (if (i64.ne (global.get $count) (i64.const 0)) (then (return (i32.const 1))))
    (global.set $count (i64.const -1))
    (local.set $way (call $length (i32.const 1)))
    (if (i32.eq (local.get $way) (i32.const 1)) (then (i64.store (i32.const 1008) (i64.const -1)) (i64.store (i32.const 1016) (i64.const -1))))
    (if (i32.eq (local.get $way) (i32.const 2)) (then (i32.store8 (i32.const 100) (i32.const 1))))
    (i32.const 0)))`, binaryen.Features.MVP);

t.test("an arena rule's last 16 bytes and its 64-bit globals are put back after every call, and writing only those 16 bytes costs no copy", async (t) => {
  const metered = meterModule(tailWriter);
  const instance = new RuleInstance(new WebAssembly.Module(metered as Uint8Array<ArrayBuffer>), declaredMemory(metered), 16, 100_000);
  const spent = (tool: string) => {
    const outcome = instance.evaluate(new Subject({ ...shellCall('ls'), toolName: tool }));
    t.equal(outcome.action, 'allow', `a call after one that wrote with ${tool.length}: as started`);
    return instance.spent;
  };
  // Names of the same lengths that differ, so that each call runs (a verdict seen before is remembered).
  const costs = ['x', 'xx', 'y', 'xxx', 'yy', 'z'].map(spent);
  // The started state is 1024 bytes: copying it back costs 65 units, the calls' own code a few either way.
  const [tail, below, none] = [costs[0]!, costs[1]!, costs[3]!];
  t.ok(below - tail >= 60, `a write far below the heap's end pays for the copy (${below} against ${tail})`);
  t.ok(Math.abs(tail - none) < 20, `a write to the last 16 bytes alone pays none (${tail} against ${none})`);
});

t.test('arguments reach the rule exactly as the call has them, short or long, whatever their characters', async (t) => {
  const r = runner(t);
  const set = await setOf('reads-arguments', rules['reads-arguments']);
  const ask = async (args: Record<string, unknown>) => (await r.evaluate(set, { ...shellCall(''), toolArguments: JSON.stringify(args) })).reason;
  const tricky = 'h\u00e9llo \u0000 \ud83d\ude00 \u202e\u200b\ud800 end';
  t.equal(await ask({ a: tricky, b: { n: 1, list: [true, null] } }), `a=${tricky}|b={"n":1,"list":[true,null]}|a=${tricky}`);
  const long = 'x'.repeat(300) + tricky + 'y'.repeat(300);
  t.equal(await ask({ a: 'short', b: long }), `a=short|b=${long}|a=short`);
  t.equal(await ask({ b: 7 }), 'a=<none>|b=7|a=<none>');
  t.equal(await ask({ a: '' }), 'a=|b=<none>|a=', 'an empty argument is not a missing one');
});

t.test('an argument one rule has read reaches the next rule as the call has it', async (t) => {
  const r = runner(t);
  const bytes = async (path: string) => new Uint8Array(await readFile(path));
  const [named, reads] = [await bytes(rules['reads-named-argument']), await bytes(rules['reads-arguments'])];
  const set = buildSnapshot([
    { name: 'reads-named-argument', priority: 10, sha256: sha256(named), bytes: named },
    { name: 'reads-arguments', priority: 20, sha256: sha256(reads), bytes: reads },
  ]);
  const a = 'yes';
  const d = await r.evaluate(set, { ...shellCall(''), toolName: 'a', toolArguments: JSON.stringify({ a, b: 'x'.repeat(500) }) });
  t.equal(d.rule, 'reads-arguments', 'the first rule read `a` and allowed');
  t.equal(d.reason, `a=yes|b=${'x'.repeat(500)}|a=yes`);
});

t.test('a rule that asks for an argument or a field to be written outside its memory fails', async (t) => {
  const r = runner(t);
  const name = [...Buffer.from('a', 'utf16le')].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
  const asking = (call: string) =>
    wat(`(module
  (import "env" "memory" (memory 1))
  (import "svc" "argument_read" (func $argument (param i32 i32 i32)))
  (import "svc" "field_read" (func $field (param i32 i32)))
  (data (i32.const 16) "${name}")
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_evaluate") (result i32) ${call} (i32.const 0)))`, binaryen.Features.MVP);
  const ctx = { ...shellCall(''), toolName: 'twelve chars', toolArguments: JSON.stringify({ a: 'twelve chars' }) };
  for (const [what, call] of [
    ['an argument', '(call $argument (i32.const 16) (i32.const 1) (i32.const 65530))'],
    ['a field', '(call $field (i32.const 1) (i32.const 65530))'],
  ] as const) {
    const module = asking(call);
    const d = await r.evaluate(buildSnapshot([{ name: 'writes-past-its-end', priority: 10, sha256: sha256(module), bytes: module }]), ctx);
    t.equal(d.action, 'block', what);
    t.match(d.failures[0]?.error, /24 bytes at 65530 are outside the rule's memory/, what);
  }
});

t.test('an argument name is read afresh when other units stand where the last one stood', async (t) => {
  const r = runner(t);
  const set = await setOf('reads-named-argument', rules['reads-named-argument']);
  const args = JSON.stringify({ a: 'yes', b: 'no', c: 'yes', f: 'no', ab: 'no', e: 'yes' });
  // Each call reads the tool's name into the same place of the rewound heap; an allowed call reads
  // nothing else. No name comes twice: a verdict seen before is remembered, and the rule not run.
  const answers = [];
  for (const tool of ['a', 'b', 'c', 'f', 'ab', 'e', 'd']) {
    const d = await r.evaluate(set, { ...shellCall(''), toolName: tool, toolArguments: args });
    answers.push(d.action === 'allow' ? 'allow' : d.reason);
  }
  t.same(answers, ['allow', 'value=no', 'allow', 'value=no', 'value=no', 'allow', 'value=<none>']);
});

t.test('the arena entry refuses to build on a runtime that frees', async (t) => {
  await t.rejects(
    compileWithAsc(t, 'allocates', [join(ASSEMBLY, 'sdk/arena.ts'), '--runtime', 'incremental', '--importMemory']),
    /svc_arena_top needs the stub runtime/,
  );
});
