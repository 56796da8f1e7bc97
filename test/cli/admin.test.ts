import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { svc } from '../helpers/wasm.js';

t.setTimeout(300_000);

t.test('admin commands against a real control plane: traces, settings, credentials, policies; errors for a wrong role, an unknown id, no login', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const viewer = await memberWithRole(cp, owner, 'VIEWER');
  const home = mkdtempSync(join(tmpdir(), 'svc-admin-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey };
  const asViewer = { ...env, SVC_API_KEY: viewer.apiKey };

  t.match((await svc(['traces', 'list'], { ...env, SVC_API_KEY: '', SVC_CONTROL_PLANE_URL: '' })).stderr, /not logged in/);
  const trace = { id: 'tr_admin1', time: new Date().toISOString(), workspace: 'x', session: null, harness: null, route: 'openai:chat', model: 'gpt-4o-mini', provider: 'openai', stream: false, status: 200, latencyMs: 12, ttfbMs: null, overheadMs: null, inputTokens: 3, outputTokens: 4, costUsd: 0.0001, enforcement: 'KILL', error: 'policy_denied', incidentId: null, findings: [], shadow: false, usageEstimated: false, priceEstimated: false, warnings: [], attempts: [], anomaly: null, cache: null, toolCalls: [], requestRule: null, responseRule: null };
  const shipped = await api(cp, 'POST', '/traces/sync-back', { token: owner.apiKey, body: { traces: [trace] } });
  t.equal(shipped.status, 200, JSON.stringify(shipped.body));
  const listed = await svc(['traces', 'list', '--action', 'KILL', '--since', '1h'], env);
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /tr_admin1  KILL  gpt-4o-mini  200/);
  t.match(JSON.parse((await svc(['traces', 'list', '--json'], env)).stdout), { traces: [{ id: 'tr_admin1' }], total: 1 });
  t.equal((await svc(['traces', 'list', '--since', 'yesterday'], env)).code, 2);
  t.match(JSON.parse((await svc(['traces', 'inspect', 'tr_admin1'], env)).stdout), { id: 'tr_admin1', error: 'policy_denied' });
  const unknown = await svc(['traces', 'inspect', 'tr_nope'], env);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /404/);

  t.match((await svc(['settings', 'set', 'reviewHoldBypassTtlMinutes', '15'], env)).stdout, /^reviewHoldBypassTtlMinutes = 15$/m);
  t.equal((await svc(['settings', 'get', 'reviewHoldBypassTtlMinutes'], env)).stdout.trim(), '15');
  writeFileSync(join(home, 'allowed.json'), JSON.stringify(['gpt-4o-mini']));
  t.equal((await svc(['settings', 'set', 'allowedModels', '--file', join(home, 'allowed.json')], env)).code, 0);
  t.match((await svc(['settings', 'get', 'allowedModels'], env)).stdout, /gpt-4o-mini/);
  const denied = await svc(['settings', 'set', 'reviewHoldBypassTtlMinutes', '20'], asViewer);
  t.equal(denied.code, 1, 'a VIEWER cannot write settings');
  t.match(denied.stderr, /403/);
  t.match((await svc(['settings', 'set', 'reviewHoldBypassTtlMinutes', '999'], env)).stderr, /400/);

  t.match((await svc(['credentials', 'set', 'openai', '--field', 'apiKey=sk-test-credential-1234'], env)).stdout, /openai: set \(…1234\)/);
  t.match((await svc(['credentials', 'list'], env)).stdout, /^openai +set \(…1234\)$/m);
  t.match((await svc(['credentials', 'unset', 'openai'], env)).stdout, /openai: removed/);
  t.match((await svc(['credentials', 'set', 'openai', '--field', 'nokey'], env)).stderr, /expected key=value/);

  const created = await api(cp, 'POST', '/policies', { token: owner.accessToken, body: { name: 'guard', sop_rules: [{ id: 'r1', action: 'block', reason: 'first' }] } });
  const id = created.body.id as string;
  await api(cp, 'PUT', `/policies/${id}`, { token: owner.accessToken, body: { sop_rules: [{ id: 'r1', action: 'block', reason: 'second' }] } });
  t.match((await svc(['policy', 'disable', id], env)).stdout, new RegExp(`${id}: disabled`));
  t.match((await svc(['policy', 'enable', id], env)).stdout, new RegExp(`${id}: enabled`));
  t.match((await svc(['policy', 'rollback', id, '--version', '1'], env)).stdout, /version 1 restored as version 3/);
  t.match(JSON.parse((await svc(['policy', 'export', '--all'], env)).stdout), [{ id, version: 3, sop_rules: [{ reason: 'first' }] }]);
  t.equal((await svc(['policy', 'disable', 'pol_nope'], env)).code, 1);
});
