import t from 'tap';
import { resolveAnomalyPolicy } from '../../../src/policy/anomaly/anomaly-policy.js';
import type { AnomalyReport } from '../../../src/policy/anomaly/detect.js';
import type { LoopFinding } from '../../../src/policy/anomaly/finding.js';
import { decideAnomaly } from '../../../src/policy/anomaly/guard.js';
import { AnomalySessions } from '../../../src/policy/anomaly/sessions.js';

const loop: LoopFinding = { detector: 'consecutive_repeat', confidence: 0.9, repeats: 3, tools: ['bash'], summary: 'bash called 3 times', loopKeys: ['bash\u0000{"secret":"s3cr3t"}'] };
const report = (findings: AnomalyReport['findings'], toolHashes: Record<string, string> = {}): AnomalyReport => ({ findings, toolHashes, fingerprint: 'f' });
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

t.test('rug pull: a tool hash that changes within the session', async (t) => {
  const memory = fresh();
  const policy = resolveAnomalyPolicy({}, {});
  t.equal(decideAnomaly(policy, report([], { read: 'h1', bash: 'h2' }), memory, false).findings.length, 0);
  const d = decideAnomaly(policy, report([], { read: 'h1', bash: 'CHANGED', grep: 'new' }), memory, false);
  t.match(d, { response: 'kill', findings: [{ detector: 'tool_poisoning', tools: ['bash'], summary: /bash changed within the session/ }] });
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
  t.equal(AnomalySessions.key('w', 'abc', 'fp'), 'w\u0000abc');
  t.equal(AnomalySessions.key('w', null, 'fp'), 'w\u0000fp:fp');
  const s = new AnomalySessions(2);
  const a = s.get('a');
  s.get('b');
  t.equal(s.get('a'), a, 'a touched');
  s.get('c');
  t.equal(s.size, 2);
  t.equal(s.get('a'), a, 'a kept');
  t.not(s.get('b').counts, a.counts, 'b was forgotten and starts fresh');
});
