import t from 'tap';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/lib/logger.js';
import type { ToolCall, ToolCallContext } from '../../../src/policy/tool-judge.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { WasmRules } from '../../../src/policy/wasm/wasm-rules.js';
import { compileRules, shellCall, textCall } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const rules = await compileRules(t, ['index', 'force-push', 'destructive-shell', 'input-probe']);
const runner = new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
t.teardown(() => runner.close());

async function setOf(name: keyof typeof rules): Promise<RuleSetSnapshot> {
  const bytes = new Uint8Array(await readFile(rules[name]));
  return buildSnapshot([{ name, priority: 10, sha256: sha256(bytes), bytes }]);
}

const codeMode = (cmd: string) => `const r = await tools.exec_command({cmd: ${cmd}, workdir: "/repo"});\ntext(r.output);`;

t.test('code mode: a command in a string literal is judged like the plain call', async (t) => {
  const forcePush = await setOf('force-push');
  const plain = await runner.evaluate(forcePush, shellCall('git push --force origin main', 'exec_command'));
  const code = await runner.evaluate(forcePush, textCall(codeMode('"git push --force origin main"')));
  t.match(code, { action: 'hold', rule: 'force-push' });
  t.equal(code.reason, plain.reason, 'the same verdict as the plain call');
  for (const literal of ["'git push -f origin main'", '`cd /repo &&\n  git push --force origin main`', '"git push --force origin \\u006dain"', '`git push \\\n--force origin main`']) {
    t.equal((await runner.evaluate(forcePush, textCall(codeMode(literal)))).action, 'hold', literal);
  }
  const allowed = ["'touch ok.txt'", '"git push origin main"', '"git push --force origin feature/x"'];
  for (const literal of allowed) t.equal((await runner.evaluate(forcePush, textCall(codeMode(literal)))).action, 'allow', literal);
});

t.test('code mode: rm -rf / is blocked wherever the code hides it', async (t) => {
  const destructive = await setOf('destructive-shell');
  const blocked = [
    codeMode("'rm -rf /'"),
    codeMode('`sudo rm -rf ${HOME}/`'),
    "// don't worry, it's fine\nawait tools.exec_command({cmd: \"rm -rf /\"});",
    '/* ` */ await tools.exec_command({cmd: "rm -rf ~"});',
    'import os\nx = 4 // 2\nos.system("rm -rf /")',
    "await tools.exec_command({cmd: \"bash -lc 'rm -rf /'\"});",
    'await tools.exec_command("rm -rf /");',
  ];
  for (const code of blocked) {
    const d = await runner.evaluate(destructive, textCall(code));
    t.equal(d.action, 'block', code);
    t.match(d.reason, /recursive rm of/);
  }
  for (const code of [codeMode("'rm -rf ./build'"), 'text("rm is not run here")', '*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n']) {
    t.equal((await runner.evaluate(destructive, textCall(code))).action, 'allow', code);
  }
});

t.test('raw text reaches rules as it is: no arguments, its literals as commands', async (t) => {
  const probe = await setOf('input-probe');
  const reason = async (ctx: ReturnType<typeof shellCall>) => (await runner.evaluate(probe, ctx)).reason;
  t.equal(await reason({ ...shellCall(''), toolArguments: JSON.stringify({ cmd: 'ls -la' }) }), 'input=json cmd=ls -la literals=');
  t.equal(await reason(textCall('{"cmd":"ls -la"}')), 'input=text cmd=<none> literals=cmd|ls -la', 'text that looks like JSON is still text');
  t.equal(await reason({ ...shellCall(''), toolArguments: '{"cmd": "ls -la' }), 'input=text cmd=<none> literals=cmd|ls -la', 'arguments that are not a JSON object are text');
  t.equal(await reason(textCall('x = "" + \'1\' + "a\\tb" + "a\\tb"')), 'input=text cmd=<none> literals=a\tb', 'literals without a letter are left out; each is listed once');
});

t.test('argv arrays and shells started with -c', async (t) => {
  const index = await setOf('index');
  const argv = { ...shellCall(''), toolName: 'shell', toolArguments: JSON.stringify({ command: ['bash', '-lc', 'git push --force origin main'] }) };
  t.match(await runner.evaluate(index, argv), { action: 'hold', rule: 'index' });
  const joined = { ...shellCall("bash -lc 'git push --force origin main'"), toolName: 'local_shell' };
  t.match(await runner.evaluate(index, joined), { action: 'hold' }, 'an argv the host joined into one line');
  t.match(await runner.evaluate(index, shellCall('sh -c "sudo rm -rf /"')), { action: 'block' });
  t.match(await runner.evaluate(index, shellCall('bash -o pipefail -c "git push -f origin master"')), { action: 'hold' });
  t.equal((await runner.evaluate(index, shellCall('bash ./deploy.sh rm -rf /'))).action, 'allow', 'a script file is not a -c script');
  const array = { ...shellCall(''), toolArguments: JSON.stringify({ command: ['rm', '-rf', '/'] }) };
  t.equal((await runner.evaluate(index, array)).action, 'block');
});

t.test('a call svc cannot read answers the failure policy of the WASM rules', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-unjudgeable-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'wasm'));
  await copyFile(rules['force-push'], join(dir, 'wasm', '30_force-push.wasm'));
  const ctx: ToolCallContext = { workspace: 'w', model: 'm', harness: null, session: null, traceId: 'tr_1' };
  const unknown: ToolCall = { id: 'call_tp', name: 'teleport_call', arguments: '{"type":"teleport_call"}', input: 'unknown' };
  const push: ToolCall = { id: 'call_p', name: 'exec', arguments: codeMode('"git push --force origin main"'), input: 'text' };
  for (const failurePolicy of ['closed', 'open'] as const) {
    const wasm = new WasmRules({ dir: join(dir, 'wasm'), fuel: 5_000_000, memoryMaxMb: 16, failurePolicy, rescanMs: 60_000, logger: createLogger('silent') });
    t.teardown(() => wasm.close());
    await wasm.start();
    const answer = wasm.judge([unknown, push], ctx);
    t.ok(Array.isArray(answer), `${failurePolicy}: loaded rules answer at once, on this thread`);
    const [verdict, judged] = await answer;
    if (failurePolicy === 'closed') {
      t.same(verdict, { action: 'block', rule: 'unjudgeable_call', source: 'wasm', reason: 'svc cannot read a teleport_call item, so no WASM rule could judge it' }, 'closed: refused');
    } else {
      t.same(verdict, { action: 'allow', unjudged: 'svc cannot read a teleport_call item, so no WASM rule could judge it' }, 'open: let through, marked unjudged');
    }
    t.match(judged, { action: 'hold', rule: 'force-push' }, `${failurePolicy}: the calls it can read are judged`);
  }
});
