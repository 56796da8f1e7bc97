import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chaos, chaosPlanSchema } from '../../src/gate/chaos.js';
import { Gate, SvcGateHold, SvcGateRefusal } from '../../src/gate/index.js';
import { compileSnapshot } from '../../src/gate/snapshot.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-chaos-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const snapshotPath = join(dir, 'snapshot.rules');
writeFileSync(snapshotPath, compileSnapshot({ workspaceId: 'ws', settings: {}, mcpServers: {}, rules: [], memberGroups: null }));
const code = async (gate: Gate, tool: string, input: object) => {
  try {
    await gate.guard(tool, input);
    return null;
  } catch (err) {
    if (err instanceof SvcGateRefusal) return err;
    throw err;
  }
};
let runs = 0;
function chaosGate(plan: unknown, opts: { events?: boolean } = {}) {
  const n = ++runs;
  const planPath = join(dir, `plan-${n}.json`);
  writeFileSync(planPath, typeof plan === 'string' ? plan : JSON.stringify(plan));
  const events = join(dir, `events-${n}.jsonl`);
  const env = { SVC_CHAOS_PLAN: planPath, ...(opts.events === false ? {} : { SVC_CHAOS_EVENTS: events }) };
  const read = () => readFileSync(events, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { gate: new Gate({ repoRoot: dir, snapshotPath, env }), read };
}

t.test('a due fault refuses an allowed call with CHAOS_FAULT and the canary; refused calls are never faulted; every call is in the events file', async (t) => {
  const { gate, read } = chaosGate({ run_id: 'run-1', canary: 'E-SVC-7f3a', faults: [{ id: 'f1', kind: 'tool.error', at_call: 2, message: 'disk full' }] });
  t.equal(await code(gate, 'Bash', { command: 'ls' }), null, 'call 1 runs');
  t.match(await code(gate, 'Bash', { command: 'git push --force' }), { code: 'SNAPSHOT' }, 'a refused call is not faulted, nor counted');
  const faulted = await code(gate, 'Bash', { command: 'pwd' });
  t.match(faulted, { code: 'CHAOS_FAULT', message: /disk full \[E-SVC-7f3a\]/ });
  t.equal(await code(gate, 'Bash', { command: 'date' }), null);
  const events = read();
  t.match(events[0], { type: 'plan_loaded', run_id: 'run-1', faults: 1 });
  t.same(events.filter((e) => e.type === 'tool_call').length, 4);
  t.match(events.filter((e) => e.type === 'gate_decision'), [
    { verdict: 'allow', tier: null },
    { verdict: 'block', tier: 'snapshot', rule: 'destructive:force-push', destructive: true, ruleHit: true },
    { verdict: 'allow' },
    { verdict: 'allow' },
  ]);
  t.ok(events.some((e) => e.type === 'fault_injected' && e.fault === 'f1' && e.call === 2));
});

t.test('a broken run refuses every call; enforce: false skips the experiment and every tier', async (t) => {
  t.match(await code(chaosGate('{ nope').gate, 'Bash', { command: 'ls' }), { code: 'CHAOS_FAULT', message: /cannot be read/ });
  t.match(await code(chaosGate({ run_id: 'r', canary: 'E-SVC-1' }, { events: false }).gate, 'Bash', { command: 'ls' }), { code: 'CHAOS_FAULT', message: /without SVC_CHAOS_EVENTS/ });
  t.match(await code(chaosGate({ run_id: 'r', canary: 'not-a-canary' }).gate, 'Bash', { command: 'ls' }), { code: 'CHAOS_FAULT' });
  t.equal(await code(chaosGate({ run_id: 'r', canary: 'E-SVC-1', enforce: false }).gate, 'Bash', { command: 'git push --force' }), null);
});

t.test('a delay holds without a hold id until the identical retry comes after delay_s; then allows or denies', async (t) => {
  let now = 0;
  const events = join(dir, 'delay.jsonl');
  const plan = chaosPlanSchema.parse({ run_id: 'd', canary: 'E-SVC-d', faults: [{ id: 'slow', kind: 'permission.deny_or_delay', mode: 'delay', every: 1, delay_s: 5, then: 'deny' }] });
  const chaos = new Chaos(plan, events, () => now);
  const inject = (input: object) => {
    try {
      chaos.inject('Bash', input);
      return null;
    } catch (err) {
      return err as SvcGateRefusal;
    }
  };
  const first = inject({ command: 'deploy' });
  t.ok(first instanceof SvcGateHold);
  t.equal((first as SvcGateHold).holdId, null);
  now = 4000;
  t.ok(inject({ command: 'deploy' }) instanceof SvcGateHold, 'too early: still held');
  now = 5000;
  t.match(inject({ command: 'deploy' }), { code: 'CHAOS_FAULT' }, 'after delay_s the retry is decided by then: deny');
});
