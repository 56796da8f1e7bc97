import t from 'tap';
import { buildPolicyConfig, effectivePiiActions } from '../../src/policy/policy-config.js';

t.test('the workspace baseline can only be tightened by the machine', async (t) => {
  const actions = effectivePiiActions({ 'pii.card': 'block', 'pii.email': 'redact', 'pii.phone': 'off' }, { 'pii.card': 'off', 'pii.email': 'block', 'pii.ssn': 'off' });
  t.equal(actions['pii.card'], 'block', 'the machine cannot loosen a workspace block');
  t.equal(actions['pii.email'], 'block', 'the machine may tighten');
  t.equal(actions['pii.phone'], 'off', 'a workspace off leaves the machine default (off for phones)');
  t.equal(actions['pii.ssn'], 'off', 'a detector the workspace leaves out keeps the machine setting');
  t.equal(actions['pii.iban'], 'redact', 'the machine default');
  t.same(effectivePiiActions(null, undefined), effectivePiiActions(undefined, undefined), 'null clears the baseline');
});

t.test('injection action: the workspace setting, else SVC_MCP_INJECTION_ACTION, else warn', async (t) => {
  const base = { version: 'v1', localPii: undefined };
  t.equal(buildPolicyConfig({ ...base, settings: {}, env: {} }).injection.action, 'warn');
  t.equal(buildPolicyConfig({ ...base, settings: {}, env: { SVC_MCP_INJECTION_ACTION: 'block' } }).injection.action, 'block');
  t.equal(buildPolicyConfig({ ...base, settings: { mcpInjectionAction: 'warn' }, env: { SVC_MCP_INJECTION_ACTION: 'block' } }).injection.action, 'warn');
  const p = buildPolicyConfig({ ...base, settings: { featureFlags: { ff_shadow_enforcement: true }, mcpInjectionPatterns: ['x+'] }, env: {} });
  t.equal(p.shadow, true);
  t.same(p.injection.extraPatterns, ['x+']);
  t.same(Object.keys(p.pii).sort(), ['pii.card', 'pii.iban', 'pii.ssn']);
});
