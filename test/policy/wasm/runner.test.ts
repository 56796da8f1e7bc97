import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createLogger } from '../../../src/lib/logger.js';
import { ruleContextSchema } from '../../../src/policy/wasm/abi.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { METERED_MODULES_KEPT, meterRules } from '../../../src/policy/wasm/metering.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { compileRules, compileWithOwnMemory, shellCall, wat } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

/** Fuel per rule per call: the examples need well under a million on these commands; the loops stop at it. */
const FUEL = 5_000_000;

const rules = await compileRules(t, ['index', 'destructive-shell', 'latest-image', 'force-push', 'infinite-loop', 'trap', 'wrong-abi', 'memory-hog', 'no-drop-database', 'loops-at-start']);

const ownMemory = await compileWithOwnMemory(t, 'memory-hog');

async function setOf(...entries: Array<[name: keyof typeof rules | 'own-memory-hog', priority: number]>): Promise<RuleSetSnapshot> {
  const loaded = await Promise.all(
    entries.map(async ([name, priority]) => {
      const bytes = new Uint8Array(await readFile(name === 'own-memory-hog' ? ownMemory : rules[name]));
      return { name, priority, sha256: sha256(bytes), bytes };
    }),
  );
  return buildSnapshot(loaded);
}

function runner(t: Tap.Test, opts: { failurePolicy?: 'closed' | 'open'; memoryCapPages?: number } = {}) {
  const r = new WasmRuleRunner({
    fuel: FUEL,
    memoryCapPages: opts.memoryCapPages ?? 256,
    failurePolicy: opts.failurePolicy ?? 'closed',
    logger: createLogger('silent'),
  });
  t.teardown(() => r.close());
  return r;
}

t.test('destructive shell commands are blocked whatever separates their words', async (t) => {
  const r = runner(t);
  const set = await setOf(['destructive-shell', 100]);
  const destructive = [
    'rm -rf /',
    'rm -fr /',
    'rm -r -f /',
    'rm --recursive --force /',
    'rm -Rf /*',
    'sudo rm -rf /',
    'sudo -E env X=1 /bin/rm -rf --no-preserve-root /',
    'rm\t-rf\t/',
    'rm -rf \\\n /',
    'cd /tmp && rm  -rf   ~',
    'rm -rf "$HOME"',
    "rm -rf '/'",
    'ls; rm -rf / # clean up',
    'echo start | xargs rm -rf /',
    'sudo -u root rm -rf /',
    'nice -n 10 rm -rf /',
    'env -u HOME rm -rf /',
  ];
  for (const command of destructive) {
    const d = await r.evaluate(set, shellCall(command));
    t.equal(d.action, 'block', JSON.stringify(command));
    t.equal(d.rule, 'destructive-shell');
  }
  const d = await r.evaluate(set, shellCall('rm -rf /'));
  t.match(d.reason, /recursive rm of \//);
  const harmless = ['rm -rf ./build', 'rm -f /tmp/x.log', 'echo "rm -rf /"', 'ls -la /', 'rm /etc/motd', 'grep -r "rm -rf /" src'];
  for (const command of harmless) t.equal((await r.evaluate(set, shellCall(command))).action, 'allow', JSON.stringify(command));
});

t.test('deploys of images tagged latest are blocked; pinned ones are not', async (t) => {
  const r = runner(t);
  const set = await setOf(['latest-image', 100]);
  for (const command of [
    'kubectl set image deployment/api api=registry.example.com/api:latest',
    'kubectl run web --image=nginx:latest',
    'helm upgrade api ./chart --set image.tag=latest',
    'docker run -d registry.example.com/api:latest',
  ]) {
    t.equal((await r.evaluate(set, shellCall(command))).action, 'block', command);
  }
  const deployTool = { ...shellCall(''), toolName: 'deploy_service', toolArguments: JSON.stringify({ image: 'ghcr.io/acme/api' }) };
  const untagged = await r.evaluate(set, deployTool);
  t.equal(untagged.action, 'block', 'an untagged image is latest');
  t.match(untagged.reason, /ghcr.io\/acme\/api/);
  for (const command of ['kubectl set image deployment/api api=registry.example.com/api:1.4.2', 'docker build -t api:latest .x', 'echo api:latest']) {
    const expected = command.startsWith('docker build') ? 'block' : 'allow';
    t.equal((await r.evaluate(set, shellCall(command))).action, expected, command);
  }
  const pinned = { ...deployTool, toolArguments: JSON.stringify({ image: 'ghcr.io/acme/api@sha256:abc' }) };
  t.equal((await r.evaluate(set, pinned)).action, 'allow', 'a digest is pinned');
  for (const tool of ['kubectl', 'helm', 'docker', 'podman', 'gcloud', 'flyctl', 'fly', 'nomad', 'skaffold', 'kustomize', '/usr/local/bin/helm']) {
    t.equal((await r.evaluate(set, shellCall(`${tool} x registry.example.com/api:latest`))).action, 'block', `${tool} is a deploy tool`);
  }
  for (const program of ['flyer', 'dockers', 'kubectx', 'helms', 'skaffolds', 'cat']) {
    t.equal((await r.evaluate(set, shellCall(`${program} x registry.example.com/api:latest`))).action, 'allow', `${program} is not`);
  }
});

t.test('force pushes to protected branches are held', async (t) => {
  const r = runner(t);
  const set = await setOf(['force-push', 100]);
  for (const command of [
    'git push --force origin main',
    'git push -f origin master',
    'git push origin +main',
    'git -C repo push --force-with-lease origin HEAD:refs/heads/main',
    'git push --force origin release/2.0',
    'git push --force',
  ]) {
    const d = await r.evaluate(set, shellCall(command));
    t.equal(d.action, 'hold', command);
    t.equal(d.rule, 'force-push');
  }
  for (const command of ['git push origin main', 'git push --force origin feature/x', 'git status']) {
    t.equal((await r.evaluate(set, shellCall(command))).action, 'allow', command);
  }
});

t.test('the first non-allow verdict in priority order wins', async (t) => {
  const r = runner(t);
  const set = await setOf(['force-push', 10], ['destructive-shell', 20]);
  const both = await r.evaluate(set, shellCall('git push -f origin main; rm -rf /'));
  t.equal(both.rule, 'force-push');
  t.equal(both.action, 'hold');
  const reversed = await setOf(['force-push', 30], ['destructive-shell', 20]);
  t.equal((await r.evaluate(reversed, shellCall('git push -f origin main; rm -rf /'))).rule, 'destructive-shell');
});

t.test('rules see every context field through the host accessors', async (t) => {
  const r = runner(t);
  const set = await setOf(['index', 100]);
  const ctx = ruleContextSchema.parse({ kind: 'tool_call', toolName: 'run', toolArguments: { cmd: 'rm -rf /' } });
  t.equal((await r.evaluate(set, ctx)).action, 'block', 'the `cmd` argument is read too');
  const request = ruleContextSchema.parse({ kind: 'request', text: 'please rm -rf /' });
  t.equal((await r.evaluate(set, request)).action, 'allow', 'the example rules look only at tool calls');
  const malformed = { ...shellCall(''), toolArguments: '{"command": "rm -rf /' };
  t.equal((await r.evaluate(set, malformed)).action, 'block', 'malformed arguments are read as text: the command in them is found');
});

t.test('loading checks the ABI version and reads the kinds of call a rule evaluates', async (t) => {
  const r = runner(t);
  const [wrong] = await r.check(await setOf(['wrong-abi', 100]));
  t.same(wrong, { error: 'it speaks ABI version 99; this host speaks 1' });
  const checks = await r.check(await setOf(['index', 10], ['no-drop-database', 20]));
  t.same(checks, [{ kinds: 2, programs: null }, { kinds: 7, programs: null }], 'the examples ask for tool calls only; a rule without svc_kinds gets every kind');
  const stuck = await r.check(await setOf(['index', 10], ['loops-at-start', 20], ['force-push', 30]));
  t.same(
    stuck,
    [{ kinds: 2, programs: null }, { error: `it ran out of fuel while starting (${FUEL} units) and was stopped` }, { kinds: 2, programs: ['git'] }],
    'a rule stuck while starting is stopped; the others load, force-push declaring it judges git only',
  );
});

t.test('a trap is the rule\'s failure: fail closed blocks, fail open skips the rule', async (t) => {
  const closed = runner(t);
  const set = await setOf(['trap', 10], ['force-push', 20]);
  const d = await closed.evaluate(set, shellCall('ls'));
  t.equal(d.action, 'block');
  t.equal(d.rule, 'trap');
  t.match(d.reason, /rule failed: it trapped/);
  t.equal(d.failures.length, 1);
  const open = runner(t, { failurePolicy: 'open' });
  const o = await open.evaluate(set, shellCall('git push -f origin main'));
  t.equal(o.action, 'hold', 'the next rule still decides');
  t.equal(o.failures[0]?.rule, 'trap');
  t.equal((await open.evaluate(set, shellCall('ls'))).action, 'allow');
});

t.test('an evaluation that runs out of fuel is stopped, and the next call gets a fresh instance', async (t) => {
  const r = runner(t);
  const set = await setOf(['infinite-loop', 10], ['destructive-shell', 20]);
  const spin = { ...shellCall('ls'), toolName: 'spin' };
  const d = await r.evaluate(set, spin);
  t.equal(d.action, 'block', 'fail closed');
  t.equal(d.rule, 'infinite-loop');
  t.equal(d.reason, `rule failed: it ran out of fuel (${FUEL} units) and was stopped`);
  t.same(d.failures, [{ rule: 'infinite-loop', error: `it ran out of fuel (${FUEL} units) and was stopped` }]);
  t.same(await r.evaluate(set, spin), d, 'the same answer every time: the stop is counted, not timed');
  t.equal(r.state().fuelExhausted, 2);
  t.equal((await r.evaluate(set, shellCall('ls'))).action, 'allow', 'the next call evaluates normally');
  t.equal((await r.evaluate(set, shellCall('rm -rf /'))).action, 'block');
  const open = runner(t, { failurePolicy: 'open' });
  const o = await open.evaluate(set, { ...spin, toolArguments: JSON.stringify({ command: 'rm -rf /' }) });
  t.equal(o.action, 'block', 'fail open: the rules after the stopped one still run');
  t.equal(o.rule, 'destructive-shell');
  t.equal(o.failures[0]?.rule, 'infinite-loop');
});

t.test('a rule that outgrows its memory cap fails', async (t) => {
  const r = runner(t, { memoryCapPages: 64 });
  const set = await setOf(['memory-hog', 10]);
  const d = await r.evaluate(set, { ...shellCall('ls'), toolName: 'hog' });
  t.equal(d.action, 'block');
  t.match(d.reason, /it trapped with \d+ of its 4194304 memory bytes in use/);
  t.ok(Number(/with (\d+) of/.exec(d.reason)![1]) > 3 * 1024 * 1024, 'it had filled its cap');
  t.equal((await r.evaluate(set, shellCall('ls'))).action, 'allow', 'a fresh instance serves the next call');
});

t.test('a module whose own memory could outgrow the cap does not load', async (t) => {
  const r = runner(t, { memoryCapPages: 64 });
  const [check] = await r.check(await setOf(['own-memory-hog', 10]));
  t.same(check, { error: 'it defines its own memory that may grow past the cap of 64 pages; compile it with --importMemory' });
});

t.test('a set found metered is looked up again once the metering cache has dropped a module', async (t) => {
  const r = runner(t);
  const allowAll = wat(`(module
  (import "env" "memory" (memory 1))
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_evaluate") (result i32) (i32.const 0)))`);
  // The same code under as many hashes as wanted: a custom section at the end, numbered.
  const numbered = (n: number) => new Uint8Array([...allowAll, 0x00, 0x04, 0x01, 0x61, n & 0xff, n >>> 8]);
  const entry = (n: number) => ({ name: `rule-${n}`, priority: 10, sha256: sha256(numbered(n)), bytes: numbered(n) });
  const kept = buildSnapshot([entry(0)]);
  t.equal((await r.evaluate(kept, shellCall('ls'))).action, 'allow');
  t.ok(r.ready(kept));
  // As many other modules as the cache keeps push it out (oldest first).
  await meterRules(buildSnapshot(Array.from({ length: METERED_MODULES_KEPT }, (_, i) => entry(i + 1))));
  t.notOk(r.ready(kept), 'its module is no longer metered');
  const again = await r.evaluate(kept, shellCall('ls'));
  t.same([again.action, again.failures], ['allow', []], 'metered again when next asked');
  t.ok(r.ready(kept));
});
