import t from 'tap';
import binaryen from 'binaryen';
import { readFile } from 'node:fs/promises';
import { createLogger } from '../../../src/lib/logger.js';
import type { RuleOutcome } from '../../../src/policy/wasm/abi.js';
import { RuleInstance, Subject } from '../../../src/policy/wasm/instance.js';
import { meterModule } from '../../../src/policy/wasm/meter.js';
import { declaredMemory } from '../../../src/policy/wasm/module-memory.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { KIND_QUESTION, VerdictMemo, type Question } from '../../../src/policy/wasm/verdict-memo.js';
import { compileRules, shellCall, wat } from '../../helpers/wasm.js';

t.setTimeout(600_000);

const BLOCKED: RuleOutcome = { action: 'block', reason: 'no' };
const ALLOWED: RuleOutcome = { action: 'allow', reason: '' };

/** A call answering the questions in `answers` (by question), null to any other. */
function callOf(answers: ReadonlyArray<readonly [Question, string | null]>) {
  const map = new Map<Question, string | null>(answers);
  return { answer: (q: Question) => map.get(q) ?? null };
}

/** Records one run of a rule that asked `answers` in order and reached `outcome`. */
function run(memo: VerdictMemo, answers: ReadonlyArray<readonly [Question, string | null]>, outcome: RuleOutcome): void {
  memo.begin();
  for (const [q, a] of answers) memo.observe(q, a);
  memo.remember(outcome, 65536, 65536);
}

t.test('a verdict is recalled for the same answers to the same questions, and for no other', async (t) => {
  const memo = new VerdictMemo();
  const asked = [[KIND_QUESTION, 'tool_call'], [1, 'bash'], ['command', 'rm -rf /']] as const;
  t.equal(memo.recall(callOf(asked)), undefined, 'nothing before the first run');
  run(memo, asked, BLOCKED);
  t.equal(memo.recall(callOf(asked)), BLOCKED);
  t.equal(memo.recall(callOf([...asked, [3, 'another model']])), BLOCKED, 'what the rule did not ask does not matter');
  t.equal(memo.recall(callOf([[KIND_QUESTION, 'tool_call'], [1, 'bash'], ['command', 'rm -rf /tmp/x']])), undefined, 'another answer');
  t.equal(memo.recall(callOf([[KIND_QUESTION, 'tool_call'], [1, 'sh'], ['command', 'rm -rf /']])), undefined, 'another answer earlier');
  t.equal(memo.recall(callOf([[KIND_QUESTION, 'tool_call'], [1, 'bash']])), undefined, 'an absent argument is an answer of its own');
  run(memo, [[KIND_QUESTION, 'tool_call'], [1, 'bash'], ['command', null]], ALLOWED);
  t.equal(memo.recall(callOf([[KIND_QUESTION, 'tool_call'], [1, 'bash']])), ALLOWED);
  t.equal(memo.recall(callOf(asked)), BLOCKED, 'the first verdict is still there');
});

t.test('a rule that asks nothing has one verdict; a question asked again at once counts once', async (t) => {
  const constant = new VerdictMemo();
  run(constant, [], ALLOWED);
  t.equal(constant.recall(callOf([[1, 'anything']])), ALLOWED);
  const again = new VerdictMemo();
  run(again, [['command', 'ls'], ['command', 'ls'], [1, 'bash']], BLOCKED);
  t.equal(again.recall(callOf([['command', 'ls'], [1, 'bash']])), BLOCKED);
});

t.test('a run that asks otherwise than a remembered one given the same answers turns the memo off', async (t) => {
  const memo = new VerdictMemo();
  run(memo, [[1, 'x'], [3, 'm1']], ALLOWED);
  t.equal(memo.recall(callOf([[1, 'x'], [3, 'm1']])), ALLOWED);
  // Told the same tool name, this run did not ask for the model: the rule reads something the host does not answer.
  run(memo, [[1, 'x']], ALLOWED);
  t.notOk(memo.enabled);
  t.equal(memo.recall(callOf([[1, 'x'], [3, 'm1']])), undefined, 'nothing is recalled any more');
  run(memo, [[1, 'x'], [3, 'm1']], ALLOWED);
  t.equal(memo.recall(callOf([[1, 'x'], [3, 'm1']])), undefined, 'nor remembered');

  const other = new VerdictMemo();
  run(other, [[1, 'x']], ALLOWED);
  run(other, [[3, 'm1']], ALLOWED);
  t.notOk(other.enabled, 'another first question');
});

t.test('long answers are not remembered, and a memo past its size starts again empty', async (t) => {
  const memo = new VerdictMemo();
  run(memo, [['command', 'x'.repeat(5000)]], BLOCKED);
  t.equal(memo.recall(callOf([['command', 'x'.repeat(5000)]])), undefined, 'a 5,000-character command');
  const command = (i: number) => `${i} `.padEnd(1000, 'y');
  for (let i = 0; i < 200; i++) run(memo, [['command', command(i)]], BLOCKED);
  t.equal(memo.recall(callOf([['command', command(199)]])), BLOCKED, 'the last one');
  t.equal(memo.recall(callOf([['command', command(0)]])), undefined, 'the first ones are gone');
  t.ok(memo.enabled);
});

t.test('a memo whose calls are seldom ones it has seen stands aside for a while, then looks calls up again', async (t) => {
  /** Offers `command` to the memo as a call would: answers whether it was looked up. */
  const offer = (memo: VerdictMemo, command: string) => {
    if (!memo.active()) return false;
    const asked = [[1, 'bash'], ['command', command]] as const;
    if (memo.recall(callOf(asked)) === undefined) run(memo, asked, ALLOWED);
    return true;
  };
  const fresh = new VerdictMemo();
  let i = 0;
  while (offer(fresh, `ls ${i}`)) i++;
  t.ok(i >= 100, `${i} new commands looked up before it stands aside`);
  let aside = 0;
  while (!offer(fresh, `ls ${i++}`)) aside++;
  t.ok(aside >= 1000 && aside <= 4096, `it stood aside for ${aside} calls, then looked one up again`);

  const repeating = new VerdictMemo();
  const looked = Array.from({ length: 10_000 }, (_, i) => offer(repeating, i % 5 === 0 ? `ls ${i}` : 'git status'));
  t.ok(looked.every(Boolean), 'a memo answering four calls in five never stands aside');
});

/** A hand-written rule, metered, as an instance with a cap of 16 pages. */
function instanceOf(module: Uint8Array): RuleInstance {
  const metered = meterModule(module);
  return new RuleInstance(new WebAssembly.Module(metered as Uint8Array<ArrayBuffer>), declaredMemory(metered), 16, 1_000_000);
}

/** Runs `instance` on a bash call named `tool`; answers its verdict and whether it ran (it spent fuel). */
function evaluate(instance: RuleInstance, tool: string, model = 'gpt-4o-mini') {
  const outcome = instance.evaluate(new Subject({ ...shellCall('ls', tool), model }));
  return { action: outcome.action, ran: instance.spent > 0 };
}

const ARENA = '(func (export "svc_arena_top") (result i32) (i32.const 1024))';

/**
 * A rule by hand whose `svc_evaluate` is `body`, with `$length` (field_length) to ask with; an arena
 * rule (its heap ends at 1024) unless `arena` is false. `imports` adds to its imports.
 */
function ruleOf(body: string, { arena = true, imports = '' } = {}): Uint8Array<ArrayBuffer> {
  return wat(`(module
  (import "env" "memory" (memory 1))
  (import "svc" "field_length" (func $length (param i32) (result i32)))
  ${imports}
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  ${arena ? ARENA : ''}
  (func (export "svc_evaluate") (result i32) ${body}))`, binaryen.Features.MVP);
}

/** Blocks a tool whose name is 5 characters long, after `before`. */
const BY_NAME_LENGTH = (before = '') => `${before} (i32.eq (call $length (i32.const 1)) (i32.const 5))`;

t.test("an arena rule is run once for each answer it is given: a call that answers as one before gets that one's verdict", async (t) => {
  const rule = instanceOf(ruleOf(BY_NAME_LENGTH()));
  t.same(evaluate(rule, 'write'), { action: 'block', ran: true });
  t.same(evaluate(rule, 'write'), { action: 'block', ran: false }, 'the same name');
  t.same(evaluate(rule, 'write', 'another model'), { action: 'block', ran: false }, 'a field the rule does not read');
  t.same(evaluate(rule, 'fetch'), { action: 'block', ran: true }, 'another name of the same length: the answer counts, not what the rule made of it');
  t.same(evaluate(rule, 'ls'), { action: 'allow', ran: true });
  t.same(evaluate(rule, 'ls'), { action: 'allow', ran: false });
});

t.test('a rule that keeps state between calls, or can learn what the host does not answer, runs on every call', async (t) => {
  const rules = {
    'not an arena rule (its state stays between calls)': ruleOf(BY_NAME_LENGTH(), { arena: false }),
    'a clock or a random seed': ruleOf(BY_NAME_LENGTH('(drop (call $seed))'), { imports: '(import "env" "seed" (func $seed (result f64)))' }),
    'a trace it writes': ruleOf(BY_NAME_LENGTH(), { imports: '(import "env" "trace" (func $trace (param i32 i32 f64 f64 f64 f64 f64)))' }),
  };
  for (const [what, module] of Object.entries(rules)) {
    const rule = instanceOf(module);
    evaluate(rule, 'write');
    t.same(evaluate(rule, 'write'), { action: 'block', ran: true }, what);
  }
});

t.test('the verdicts a rule reached are dropped when its memory grows, the one thing a call leaves that the rule can see', async (t) => {
  // Grows its memory on a call to `grow`, which no call puts back; blocks while its memory is more than a page.
  const rule = instanceOf(
    ruleOf(`
    (if (i32.eq (call $length (i32.const 1)) (i32.const 4)) (then (drop (memory.grow (i32.const 1)))))
    (i32.gt_u (memory.size) (i32.const 1))`),
  );
  t.same(evaluate(rule, 'x'), { action: 'allow', ran: true });
  t.same(evaluate(rule, 'x'), { action: 'allow', ran: false });
  t.same(evaluate(rule, 'grow'), { action: 'block', ran: true });
  t.same(evaluate(rule, 'x'), { action: 'block', ran: true }, 'run again with its memory grown');
  t.same(evaluate(rule, 'x'), { action: 'block', ran: false });
  t.same(evaluate(rule, 'grow'), { action: 'block', ran: true });
  t.same(evaluate(rule, 'grow'), { action: 'block', ran: true }, 'a call that grew the memory began at a size no later call begins at: it is not remembered');
});

t.test('a rule seen asking otherwise given the same answers is no longer remembered', async (t) => {
  // Asks for the model unless a call to `mark` wrote above its heap's end, which calls do not put back.
  const rule = instanceOf(
    ruleOf(`
    (if (i32.eq (call $length (i32.const 1)) (i32.const 4)) (then (i32.store8 (i32.const 2000) (i32.const 1))))
    (if (i32.eqz (i32.load8_u (i32.const 2000))) (then (drop (call $length (i32.const 3)))))
    (i32.const 0)`),
  );
  t.same(evaluate(rule, 'x', 'm1'), { action: 'allow', ran: true });
  t.same(evaluate(rule, 'x', 'm1'), { action: 'allow', ran: false });
  t.same(evaluate(rule, 'mark'), { action: 'allow', ran: true });
  t.same(evaluate(rule, 'x', 'm2'), { action: 'allow', ran: true }, 'another model: it runs, and this time does not ask for it');
  t.same(evaluate(rule, 'x', 'm1'), { action: 'allow', ran: true }, 'from then on it runs on every call');
});

t.test('a failed run is not remembered: a rule that runs out of fuel on a call does so every time it is made', async (t) => {
  const rule = instanceOf(
    ruleOf(`
    (if (i32.eq (call $length (i32.const 1)) (i32.const 4)) (then (loop $forever (br $forever))))
    (i32.const 0)`),
  );
  for (let i = 0; i < 3; i++) t.throws(() => evaluate(rule, 'spin'), /ran out of fuel/, `call ${i + 1}`);
  t.same(evaluate(rule, 'ls'), { action: 'allow', ran: true });
});

t.test("the example rules' verdicts, recalled, are the verdicts they reach when they run", async (t) => {
  const examples = await compileRules(t, ['index', 'destructive-shell', 'latest-image', 'force-push']);
  const modules = await Promise.all(Object.entries(examples).map(async ([name, path]) => ({ name, bytes: new Uint8Array(await readFile(path)) })));
  const set = buildSnapshot(modules.map(({ name, bytes }, i) => ({ name, priority: 10 * (i + 1), sha256: sha256(bytes), bytes })));
  const commands = ['ls -la', 'rm -rf /', 'git push --force origin main', 'kubectl set image deploy/api api=api:latest', 'git status', 'sudo rm -rf ~', 'git push origin feature'];
  const runner = new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
  t.teardown(() => runner.close());
  const first = [];
  for (const command of commands) first.push(await runner.evaluate(set, shellCall(command)));
  t.ok(first.some((d) => d.action === 'block') && first.some((d) => d.action === 'allow'), 'some calls are blocked, some allowed');
  t.equal(runner.state().remembered, 0, 'every call new: every rule ran');
  const again = [];
  for (const command of [...commands].reverse()) again.push(await runner.evaluate(set, shellCall(command)));
  t.same(again.reverse(), first);
  const { remembered } = runner.state();
  t.ok(remembered >= commands.length, `the second time, ${remembered} evaluations were answered from memory`);
  await runner.close();
  t.equal(runner.state().remembered, remembered, 'the count outlives the instances');
});
