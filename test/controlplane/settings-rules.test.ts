import t from 'tap';
import { api, signUp, startTestControlPlane, type Account, type TestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);

async function setup(_t: Tap.Test) {
  const owner = await signUp(cp);
  const put = (body: unknown) => api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body });
  const get = async () => (await api(cp, 'GET', '/workspace/settings', { token: owner.accessToken })).body.settings;
  return { cp, owner, put, get };
}

async function history(cp: TestControlPlane, owner: Account) {
  return (await api(cp, 'GET', '/audit/timeline?limit=500', { token: owner.accessToken })).body;
}

t.test('read form: defaults filled in, keys without a default left out', async (t) => {
  const { cp, owner } = await setup(t);
  const res = await api(cp, 'GET', '/workspace/settings', { token: owner.apiKey });
  t.equal(res.status, 200);
  t.equal(res.body.workspaceId, owner.workspaceId);
  const s = res.body.settings;
  t.match(s, {
    mcpProxyFailBehavior: 'open',
    mcpProxyMode: 'per-session',
    allowLocalMemoryVaults: true,
    configBodyUpload: false,
    ssoKeyMaxIdleDays: 30,
    reviewHoldBypassEnabled: false,
    reviewHoldBypassTtlMinutes: 10,
    loop_review: { requireDistinctApprover: false },
    imageProvenance: { enabled: false, requireDigest: true, allowedRegistries: [], approvedDigests: {}, unverifiableAction: 'allow' },
    bypassEnforcementTier: 'rewrite',
    anomaly_enforcement: { enabled: false, minRepeats: 3, minConfidence: 0.8, action: 'HIJACK', categories: [] },
    trajectory_monitor_mode: 'PASSIVE',
    securityProbeSampleRate: 1,
    governanceCardLabelingEnabled: true,
    decisionsLogEnabled: false,
    enableLocalSkillAuditDelete: false,
    ciscoSkillScannerEnabled: false,
    semanticSkillAnalysisEnabled: false,
    virusTotalSkillLookupEnabled: false,
  });
  t.same(Object.keys(s.banditKeywords).sort(), ['debugging', 'deployment', 'review', 'testing'], 'built-in keyword lists');
  t.equal(s.featureFlags.ff_bandit_routing, false);
  t.notOk('ff_shadow_routing' in s.featureFlags, 'ff_shadow_routing has no default');
  for (const key of [
    'mcpDefaultPolicy', 'mcpAllowedServers', 'mcpAllowedTools', 'mcpToolDescriptionOverrides', 'mcpHighRiskToolChange', 'mcpBudgets', 'mcpInjectionAction',
    'mcpInjectionPatterns', 'mcpAnomalyMode', 'mcpAnomalyOverrides', 'allowedModels', 'egressMode', 'egressAllow', 'piiDetectors', 'byocStorage',
    'routingCandidates', 'contractedRates', 'upstreamRetry', 'enforcement_mode', 'workspace_hard_cap_enabled', 'sso_group_policy', 'sandboxRequirement',
    'ssoKeyGateEnabledAt', 'appliedSecurityPosture', 'appliedCostPosture',
  ]) {
    t.notOk(key in s, `${key} is left out`);
  }
});

t.test('rule 1: an unknown top-level key is refused naming it, and the valid keys beside it are not stored', async (t) => {
  const { put, get } = await setup(t);
  const res = await put({ allowedModels: ['gpt-4o'], fancyMode: true });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'validation');
  t.match(res.body.error.message, /fancyMode/);
  t.notOk('allowedModels' in (await get()));
});

t.test('rule 2: removed keys get a 400 that says so', async (t) => {
  const { put } = await setup(t);
  for (const key of ['managedJudgeModel', 'typedJudgeBackend', 'typedJudgeBackendAck']) {
    const res = await put({ [key]: 'x' });
    t.equal(res.status, 400);
    t.match(res.body.error.message, new RegExp(`${key} has been removed`));
  }
});

t.test('rule 3: an empty body, no body and a non-object body are refused', async (t) => {
  const { cp, owner, put } = await setup(t);
  const empty = await put({});
  t.equal(empty.status, 400);
  t.match(empty.body.error.message, /empty/);
  t.equal((await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken })).status, 400);
  t.equal((await put([{ allowedModels: [] }])).status, 400);
  t.equal((await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, rawBody: '{"allowedModels": [' })).status, 400);
});

t.test('read-only keys are refused on write', async (t) => {
  const { put } = await setup(t);
  for (const key of ['ssoKeyGateEnabledAt', 'appliedSecurityPosture', 'appliedCostPosture']) {
    const res = await put({ [key]: 'x' });
    t.equal(res.status, 400);
    t.match(res.body.error.message, new RegExp(`${key} is read-only`));
  }
});

t.test('rule 4: only sent keys change, each replaced whole; featureFlags merge flag by flag', async (t) => {
  const { put, get } = await setup(t);
  await put({ allowedModels: ['a', 'b'], imageProvenance: { enabled: true, allowedRegistries: ['ghcr.io'] } });
  const res = await put({ imageProvenance: { unverifiableAction: 'warn' } });
  t.equal(res.status, 200);
  t.equal(res.body.updated, true);
  t.same(res.body.settings.allowedModels, ['a', 'b'], 'an unsent key is kept');
  t.match(res.body.settings.imageProvenance, { enabled: false, allowedRegistries: [], unverifiableAction: 'warn' }, 'a sent object replaces the stored one whole');
  await put({ featureFlags: { ff_bandit_routing: true, ff_shadow_routing: true } });
  await put({ featureFlags: { ff_shadow_routing: false, ff_response_cache_exact: true } });
  t.match((await get()).featureFlags, { ff_bandit_routing: true, ff_shadow_routing: false, ff_response_cache_exact: true, ff_shadow_enforcement: false });
});

t.test('rule 4: byocStorage keeps stored secrets when omitted or sent as __redacted__; they are encrypted at rest and never returned', async (t) => {
  const { cp, owner, put, get } = await setup(t);
  const first = await put({ byocStorage: { provider: 's3', bucketName: 'traces', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'super-secret-value', credentials: 'json-creds' } });
  t.match(first.body.settings.byocStorage, { provider: 's3', bucketName: 'traces', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: '__redacted__', credentials: '__redacted__' });
  const [row] = await cp.db.query<{ settings: unknown; byoc_secrets: string }>('SELECT settings, byoc_secrets FROM workspaces WHERE id = $1', [owner.workspaceId]);
  t.notMatch(JSON.stringify(row), /super-secret-value|json-creds/, 'the secrets are not stored in clear');
  await put({ byocStorage: { provider: 's3', bucketName: 'traces-2', secretAccessKey: '__redacted__' } });
  t.match((await get()).byocStorage, { bucketName: 'traces-2', secretAccessKey: '__redacted__', credentials: '__redacted__' });
  t.notOk('accessKeyId' in (await get()).byocStorage, 'a non-secret field not sent is replaced');
  await put({ byocStorage: { provider: 'disabled' } });
  t.match((await get()).byocStorage, { provider: 'disabled', secretAccessKey: '__redacted__' }, 'still kept when omitted');
  const timeline = await history(cp, owner);
  t.notMatch(JSON.stringify(timeline), /super-secret-value|json-creds/, 'the audit timeline never shows a secret');
});

t.test('rule 4: null removes sso_group_policy, piiDetectors and upstreamRetry', async (t) => {
  const { cp, owner, put, get } = await setup(t);
  await cp.db.query(`UPDATE workspaces SET plan = 'enterprise' WHERE id = $1`, [owner.workspaceId]);
  await put({ sso_group_policy: { highRiskTools: ['exec'] }, piiDetectors: { 'pii.card': 'block' }, upstreamRetry: { maxAttempts: 3 } });
  const set = await get();
  t.same(set.sso_group_policy, { highRiskTools: ['exec'], requiredGroups: [], requireOboFor: [] }, 'list fields default to empty');
  t.same(set.piiDetectors, { 'pii.card': 'block' });
  const res = await put({ sso_group_policy: null, piiDetectors: null, upstreamRetry: null });
  t.equal(res.status, 200);
  for (const key of ['sso_group_policy', 'piiDetectors', 'upstreamRetry']) t.notOk(key in res.body.settings, `${key} removed`);
});

t.test('rule 5: a non-null sso_group_policy needs a single-sign-on plan; null works on every plan', async (t) => {
  const { put, get } = await setup(t);
  const refused = await put({ sso_group_policy: { highRiskTools: ['exec'] } });
  t.equal(refused.status, 403);
  t.match(refused.body.error.message, /single sign-on/);
  t.notOk('sso_group_policy' in (await get()));
  t.equal((await put({ sso_group_policy: null })).status, 200);
});

t.test('rule 6: every change is in the settings history of the audit timeline; refused writes are not', async (t) => {
  const { cp, owner, put } = await setup(t);
  await put({ allowedModels: ['gpt-4o'], egressMode: 'monitor' });
  await put({ allowedModels: ['gpt-4o', 'gpt-4o-mini'] });
  await put({ bogus: 1 });
  await put({ egressMode: 'monitor' });
  const timeline = await history(cp, owner);
  t.equal(timeline.total, 3);
  t.match(timeline.settingsHistory, [
    { key: 'allowedModels', before: ['gpt-4o'], after: ['gpt-4o', 'gpt-4o-mini'], actorMemberId: owner.memberId },
    { key: 'egressMode', before: null, after: 'monitor' },
    { key: 'allowedModels', before: null, after: ['gpt-4o'] },
  ]);
  t.match(timeline.settingsHistory[0].at, /^\d{4}-\d\d-\d\dT/);
  const future = await api(cp, 'GET', `/audit/timeline?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: owner.accessToken });
  t.equal(future.body.total, 0, 'the date range filters');
  t.equal((await api(cp, 'GET', '/audit/timeline?limit=0', { token: owner.accessToken })).status, 400);
});

t.test('ssoKeyGateEnabledAt: stamped when the window goes from unset or null to a number, kept on another number, removed on null', async (t) => {
  const { put, get } = await setup(t);
  t.notOk('ssoKeyGateEnabledAt' in (await get()));
  const before = Date.now();
  await put({ ssoKeyMaxIdleDays: 14 });
  const stamped = (await get()).ssoKeyGateEnabledAt;
  t.ok(Date.parse(stamped) >= before - 1000, 'stamped with the time of the write');
  await new Promise((r) => setTimeout(r, 5));
  await put({ ssoKeyMaxIdleDays: 60 });
  t.equal((await get()).ssoKeyGateEnabledAt, stamped, 'kept when the window changes');
  await put({ reviewHoldBypassEnabled: true });
  t.equal((await get()).ssoKeyGateEnabledAt, stamped, 'kept by unrelated writes');
  const off = await put({ ssoKeyMaxIdleDays: null });
  t.equal(off.body.settings.ssoKeyMaxIdleDays, null);
  t.notOk('ssoKeyGateEnabledAt' in off.body.settings, 'removed when set back to null');
  await new Promise((r) => setTimeout(r, 5));
  await put({ ssoKeyMaxIdleDays: 7 });
  const again = (await get()).ssoKeyGateEnabledAt;
  t.ok(again !== undefined && again !== stamped, 'stamped anew from null');
});

t.test('applied postures: POST /workspace/posture stores the label; a hand change of one of its settings removes it', async (t) => {
  const { cp, owner, put, get } = await setup(t);
  const applied = await api(cp, 'POST', '/workspace/posture', { token: owner.accessToken, body: { security: 'strict', cost: 'economy' } });
  t.equal(applied.status, 200);
  t.match(applied.body.settings, { appliedSecurityPosture: 'strict', appliedCostPosture: 'economy', mcpDefaultPolicy: 'deny', featureFlags: { ff_sql_drop_strict_block: true, ff_bandit_routing: true } });
  t.same((await api(cp, 'GET', '/workspace/posture', { token: owner.accessToken })).body, { security: 'strict', cost: 'economy' });
  await put({ allowedModels: ['gpt-4o'] });
  t.match(await get(), { appliedSecurityPosture: 'strict', appliedCostPosture: 'economy' }, 'a setting outside both postures keeps the labels');
  await put({ mcpDefaultPolicy: 'deny' });
  t.equal((await get()).appliedSecurityPosture, 'strict', 'writing the same value is not a change');
  await put({ mcpDefaultPolicy: 'allow' });
  const s = await get();
  t.notOk('appliedSecurityPosture' in s, 'a hand change of a security setting removes the security label');
  t.equal(s.appliedCostPosture, 'economy');
  await put({ featureFlags: { ff_bandit_routing: false } });
  t.notOk('appliedCostPosture' in (await get()), "a hand change of one of the cost posture's flags removes the cost label");
  t.equal((await api(cp, 'POST', '/workspace/posture', { token: owner.accessToken, body: {} })).status, 400);
});
