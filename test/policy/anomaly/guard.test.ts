import t from 'tap';
import { resolveAnomalyPolicy } from '../../../src/policy/anomaly/anomaly-policy.js';
import type { AnomalyReport } from '../../../src/policy/anomaly/detect.js';
import type { LoopFinding } from '../../../src/policy/anomaly/finding.js';
import { decideAnomaly } from '../../../src/policy/anomaly/guard.js';
import { AnomalySessions } from '../../../src/policy/anomaly/sessions.js';
import type { ToolPin } from '../../../src/policy/anomaly/poisoning.js';

const loop: LoopFinding = { detector: 'consecutive_repeat', confidence: 0.9, repeats: 3, tools: ['bash'], summary: 'bash called 3 times', loopKeys: ['bash\u0000{"secret":"s3cr3t"}'] };
const report = (findings: AnomalyReport['findings'], toolPins: Record<string, ToolPin> = {}): AnomalyReport => ({ findings, toolPins, fingerprint: 'f' });
const pin = (hash: string, ...instructions: ToolPin['instructions']): ToolPin => ({ hash, instructions });
const fresh = () => new AnomalySessions().get('k');

t.test('enforce: the detector acts at its action; the card names the finding; no call arguments on the traced finding', async (t) => {
  const d = decideAnomaly(resolveAnomalyPolicy({}, {}), report([loop]), fresh(), false);
  t.equal(d.response, 'reask');
  t.match(d.card, /consecutive_repeat: bash called 3 times\./);
  t.notMatch(JSON.stringify(d.findings), /s3cr3t/);
  t.match(d.findings, [{ detector: 'consecutive_repeat', action: 'reask', sessionCount: 1 }]);
});

t.test('the strongest response wins; a kill carries no card; low confidence is only recorded', async (t) => {
  const code = { detector: 'code_as_action' as const, confidence: 0.95, repeats: 1, tools: [], summary: 'x' };
  const weak = { ...code, confidence: 0.6 };
  const d = decideAnomaly(resolveAnomalyPolicy({}, {}), report([loop, code]), fresh(), false);
  t.equal(d.response, 'kill');
  t.equal(d.card, null);
  t.match(decideAnomaly(resolveAnomalyPolicy({}, {}), report([weak]), fresh(), false), { response: null, findings: [{ action: 'report' }] });
});

t.test('warn and shadow: recorded, never acted on', async (t) => {
  t.match(decideAnomaly(resolveAnomalyPolicy({ mcpAnomalyMode: 'warn' }, {}), report([loop]), fresh(), false), { response: null, card: null, findings: [{ action: 'report' }] });
  t.match(decideAnomaly(resolveAnomalyPolicy({}, {}), report([loop]), fresh(), true), { response: null });
});

t.test('rug pull: a tool redefined within the session with an instruction it did not carry', async (t) => {
  const memory = fresh();
  const policy = resolveAnomalyPolicy({}, {});
  t.equal(decideAnomaly(policy, report([], { read: pin('h1'), bash: pin('h2', 'covert_manner') }), memory, false).findings.length, 0);
  const d = decideAnomaly(policy, report([], { read: pin('h1'), bash: pin('CHANGED', 'covert_manner', 'secret_access'), grep: pin('new', 'override') }), memory, false);
  t.match(d, { response: 'kill', findings: [{ detector: 'tool_poisoning', confidence: 0.9, tools: ['bash'], summary: /bash changed within the session and now instructs the model \(secret access\)/ }] });
  const again = decideAnomaly(policy, report([], { read: pin('h1'), bash: pin('CHANGED', 'covert_manner', 'secret_access') }), memory, false);
  t.match(again, { response: 'kill' }, 'the broken pin is kept: the tool stays refused');
});

t.test('a tool only reworded within the session is reported, not acted on, and its new definition accepted', async (t) => {
  const memory = fresh();
  const policy = resolveAnomalyPolicy({}, {});
  decideAnomaly(policy, report([], { exec: pin('h1', 'covert_manner'), read: pin('r1') }), memory, false);
  const d = decideAnomaly(policy, report([], { exec: pin('h2', 'covert_manner'), read: pin('r2') }), memory, false);
  t.match(d, { response: null, findings: [{ detector: 'tool_poisoning', action: 'report', tools: ['exec', 'read'], summary: /without adding instructions/ }] });
  t.ok(d.findings[0]!.confidence < 0.5);
  t.same(decideAnomaly(policy, report([], { exec: pin('h2', 'covert_manner'), read: pin('r2') }), memory, false).findings, [], 'the rewording is the new pin');
  const dropped = decideAnomaly(policy, report([], { exec: pin('h3'), read: pin('r2') }), memory, false);
  t.match(dropped, { response: null }, 'losing an instruction is no rug pull');
});

t.test('anomaly_enforcement counts per session and category; an override caps its action', async (t) => {
  const policy = resolveAnomalyPolicy({ anomaly_enforcement: { enabled: true, minRepeats: 2, action: 'KILL' }, mcpAnomalyOverrides: { consecutive_repeat: 'steer' } }, {});
  const memory = fresh();
  t.match(decideAnomaly(policy, report([loop]), memory, false), { response: null, findings: [{ sessionCount: 1 }] });
  t.match(decideAnomaly(policy, report([loop]), memory, false), { response: 'steer', findings: [{ sessionCount: 2 }] });
  const uncapped = resolveAnomalyPolicy({ anomaly_enforcement: { enabled: true, minRepeats: 2, action: 'KILL' } }, {});
  const m2 = fresh();
  decideAnomaly(uncapped, report([loop]), m2, false);
  t.match(decideAnomaly(uncapped, report([loop]), m2, false), { response: 'kill' });
});

t.test('sessions: keyed by workspace and session, the least recently seen forgotten first', async (t) => {
  t.equal(AnomalySessions.key('w', 'abc', { fingerprint: 'fp' }), 'w\u0000abc');
  t.equal(AnomalySessions.key('w', null, { fingerprint: 'fp' }), 'w\u0000fp:fp');
  const s = new AnomalySessions(2);
  const a = s.get('a');
  s.get('b');
  t.equal(s.get('a'), a, 'a touched');
  s.get('c');
  t.equal(s.size, 2);
  t.equal(s.get('a'), a, 'a kept');
  t.not(s.get('b').counts, a.counts, 'b was forgotten and starts fresh');
});
