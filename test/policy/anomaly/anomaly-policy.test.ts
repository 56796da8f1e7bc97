import t from 'tap';
import { anomalySettingsIssues, CEILINGS, resolveAnomalyPolicy } from '../../../src/policy/anomaly/anomaly-policy.js';

t.test('defaults: enforce, every detector at its ceiling, anomaly_enforcement off with the seed defaults', async (t) => {
  const p = resolveAnomalyPolicy({}, {});
  t.equal(p.mode, 'enforce');
  t.same(p.actions, CEILINGS);
  t.same(p.enforcement, { enabled: false, minRepeats: 3, minConfidence: 0.8, action: 'HIJACK', categories: [] });
  t.same(p.ignored, []);
});

t.test('mode: the workspace, else SVC_MCP_ANOMALY_MODE, else enforce; a bad variable is reported', async (t) => {
  t.equal(resolveAnomalyPolicy({}, { SVC_MCP_ANOMALY_MODE: 'warn' }).mode, 'warn');
  t.equal(resolveAnomalyPolicy({ mcpAnomalyMode: 'off' }, { SVC_MCP_ANOMALY_MODE: 'warn' }).mode, 'off');
  const bad = resolveAnomalyPolicy({}, { SVC_MCP_ANOMALY_MODE: 'loud' });
  t.equal(bad.mode, 'enforce');
  t.match(bad.ignored, [/SVC_MCP_ANOMALY_MODE 'loud'/]);
});

t.test('overrides: lower only; the workspace wins detector by detector; raising env entries are ignored and reported', async (t) => {
  const p = resolveAnomalyPolicy(
    { mcpAnomalyOverrides: { code_as_action: 'steer' } },
    { SVC_MCP_ANOMALY_OVERRIDES: 'code_as_action=off, consecutive_repeat=steer, landmark_cycle=reask, nosuch=off, ping_pong_cycle=maybe' },
  );
  t.equal(p.actions.code_as_action, 'steer');
  t.equal(p.actions.consecutive_repeat, 'steer');
  t.equal(p.actions.landmark_cycle, 'steer', 'a raising env entry leaves the ceiling');
  t.equal(p.actions.ping_pong_cycle, 'reask');
  t.match(p.ignored, [/landmark_cycle=reask' would raise the detector above its ceiling 'steer'/, /'nosuch=off' names no detector/, /'ping_pong_cycle=maybe'/]);
  t.equal(resolveAnomalyPolicy({}, { SVC_MCP_ANOMALY_OVERRIDES: '{"dlp_escalation":"reask"}' }).actions.dlp_escalation, 'reask', 'a JSON object works too');
  t.match(resolveAnomalyPolicy({}, { SVC_MCP_ANOMALY_OVERRIDES: '{"dlp' }).ignored, [/neither/]);
});

t.test('a raising workspace override is refused like a value out of bounds', async (t) => {
  t.same(anomalySettingsIssues({ mcpAnomalyOverrides: { tool_poisoning: 'kill', landmark_cycle: 'off' } }), []);
  t.match(anomalySettingsIssues({ mcpAnomalyOverrides: { tool_diversity_collapse: 'reask' } }), [/tool_diversity_collapse: 'reask' would raise/]);
  t.throws(() => resolveAnomalyPolicy({ mcpAnomalyOverrides: { ping_pong_cycle: 'kill' } }, {}), { name: 'ConfigError', message: /settings\.mcpAnomalyOverrides\.ping_pong_cycle/ });
});
