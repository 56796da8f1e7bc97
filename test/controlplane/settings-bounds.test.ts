import t from 'tap';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';

const rep = (s: string, n: number) => s.repeat(n);
const list = (n: number, item: (i: number) => unknown = (i) => `item${i}`) => Array.from({ length: n }, (_, i) => item(i));
const digest = (i: number) => `sha256:${i.toString(16).padStart(64, '0')}`;
const budget = (i: number) => ({ id: `b${i}`, scope: 'server', server: 'git', period: 'hour', limit: 10 });

/** Every settings key of seed 001: values at each edge that are accepted, and values past it that are refused. */
const CASES: Record<string, { ok: unknown[]; bad: unknown[] }> = {
  mcpProxyFailBehavior: { ok: ['open', 'closed'], bad: ['half', true] },
  mcpProxyMode: { ok: ['per-session', 'daemon'], bad: ['cluster'] },
  mcpDefaultPolicy: { ok: ['allow', 'deny'], bad: ['maybe'] },
  mcpAllowedServers: { ok: [[rep('s', 256)], list(500), []], bad: [[''], [rep('s', 257)], list(501)] },
  mcpAllowedTools: { ok: [list(500), ['x']], bad: [[''], list(501)] },
  mcpToolDescriptionOverrides: { ok: [{ read_file: rep('d', 4000) }], bad: [{ read_file: rep('d', 4001) }, { read_file: 1 }] },
  mcpHighRiskToolChange: { ok: ['notify', 'hold'], bad: ['ignore'] },
  mcpBudgets: {
    ok: [
      { budgets: list(200, budget), warnAtPct: 1 },
      { budgets: [], warnAtPct: 99 },
      { budgets: [{ id: rep('a', 40), scope: 'member_server', memberId: 'm1', server: 'git', period: 'day', limit: 1_000_000 }] },
      { budgets: [{ id: 'x_-1', scope: 'tool', tool: 'exec', period: 'hour', limit: 1 }] },
    ],
    bad: [
      { budgets: list(201, budget) },
      { budgets: [], warnAtPct: 0 },
      { budgets: [], warnAtPct: 100 },
      { warnAtPct: 50 },
      { budgets: [{ ...budget(0), id: rep('a', 41) }] },
      { budgets: [{ ...budget(0), id: 'a.b' }] },
      { budgets: [{ ...budget(0), limit: 0 }] },
      { budgets: [{ ...budget(0), limit: 1_000_001 }] },
      { budgets: [budget(1), budget(1)] },
      { budgets: [{ id: 'x', scope: 'tool', period: 'hour', limit: 1 }] },
      { budgets: [{ ...budget(0), period: 'week' }] },
      { budgets: [{ ...budget(0), colour: 'red' }] },
      { budgets: [], extra: 1 },
    ],
  },
  mcpInjectionAction: { ok: ['warn', 'block'], bad: ['log'] },
  mcpInjectionPatterns: { ok: [[rep('p', 512)], list(200)], bad: [[''], [rep('p', 513)], list(201)] },
  mcpAnomalyMode: { ok: ['enforce', 'warn', 'off'], bad: ['on'] },
  mcpAnomalyOverrides: {
    // Each detector at or below its ceiling; an override above it (landmark_cycle's is steer) is refused.
    ok: [{ consecutive_repeat: 'steer', ping_pong_cycle: 'reask', landmark_cycle: 'steer', tool_diversity_collapse: 'off', code_as_action: 'off', tool_poisoning: 'kill', dlp_escalation: 'steer' }],
    bad: [{ unknown_detector: 'kill' }, { tool_poisoning: 'explode' }, { landmark_cycle: 'kill' }, { tool_diversity_collapse: 'reask' }],
  },
  allowedModels: { ok: [[rep('m', 256)], list(512), []], bad: [[''], [rep('m', 257)], list(513), null] },
  egressMode: { ok: ['off', 'monitor', 'enforce'], bad: ['block'] },
  egressAllow: { ok: [[rep('h', 256)], list(512)], bad: [[''], [rep('h', 257)], list(513)] },
  piiDetectors: { ok: [{ 'pii.card': 'block', 'pii.iban': 'redact', 'pii.ssn': 'off', 'pii.email': 'redact', 'pii.phone': 'block' }, {}], bad: [{ 'pii.passport': 'off' }, { 'pii.card': 'mask' }] },
  allowLocalMemoryVaults: { ok: [true, false], bad: ['yes', 1] },
  configBodyUpload: { ok: [true, false], bad: ['no'] },
  byocStorage: {
    ok: [
      {
        provider: 's3',
        bucketName: rep('b', 255),
        prefix: rep('p', 255),
        projectId: rep('j', 128),
        region: rep('r', 64),
        accessKeyId: rep('k', 256),
        secretAccessKey: rep('s', 1024),
        credentials: rep('c', 8192),
        mode: 'mirror',
      },
      { provider: 'gcs', bucketName: 'b', prefix: '', mode: 'primary' },
      { provider: 'disabled' },
    ],
    bad: [
      { provider: 'azure' },
      { bucketName: 'b' },
      { provider: 's3', bucketName: '' },
      { provider: 's3', bucketName: rep('b', 256) },
      { provider: 's3', prefix: rep('p', 256) },
      { provider: 's3', projectId: rep('j', 129) },
      { provider: 's3', region: rep('r', 65) },
      { provider: 's3', accessKeyId: rep('k', 257) },
      { provider: 's3', secretAccessKey: rep('s', 1025) },
      { provider: 's3', credentials: rep('c', 8193) },
      { provider: 's3', mode: 'copy' },
      { provider: 's3', endpoint: 'https://example.com' },
    ],
  },
  featureFlags: {
    ok: [
      {
        ff_bandit_routing: true,
        ff_shadow_routing: true,
        ff_response_cache_exact: true,
        ff_response_cache_semantic: true,
        ff_shadow_enforcement: true,
        ff_sql_drop_strict_block: true,
        ff_optimizer_evolution: true,
        ff_optimizer_auto_apply: true,
        ff_skillopt_auto_apply: true,
      },
    ],
    bad: [{ ff_unknown: true }, { ff_bandit_routing: 'on' }],
  },
  banditKeywords: {
    ok: [{ testing: ['ab', rep('a', 19), 'ci/cd'], deployment: [], review: ['r2'], debugging: ['gdb'] }],
    bad: [{ testing: ['a'] }, { testing: [rep('a', 20)] }, { testing: ['two words'] }, { refactoring: ['x1'] }],
  },
  routingCandidates: {
    ok: [list(16, (i) => `model-${i}`), [rep('m', 128)], ['a.b_c:d/e@f-g']],
    bad: [list(17, (i) => `model-${i}`), ['gpt-4o', 'gpt-4o'], [rep('m', 129)], ['bad id!'], ['']],
  },
  contractedRates: {
    ok: [{ [rep('m', 128)]: { inputCostPer1k: 0, outputCostPer1k: 1000 } }],
    bad: [
      { 'gpt-4o': { inputCostPer1k: 1000.01, outputCostPer1k: 1 } },
      { 'gpt-4o': { inputCostPer1k: -1, outputCostPer1k: 1 } },
      { 'gpt-4o': { inputCostPer1k: 1 } },
      { '': { inputCostPer1k: 1, outputCostPer1k: 1 } },
      { [rep('m', 129)]: { inputCostPer1k: 1, outputCostPer1k: 1 } },
      { 'gpt-4o': { inputCostPer1k: 1, outputCostPer1k: 1, currency: 'EUR' } },
    ],
  },
  upstreamRetry: {
    ok: [
      {
        enabled: true,
        maxAttempts: 1,
        initialBackoffMs: 0,
        maxBackoffMs: 60_000,
        budgetMs: 120_000,
        onStatus: [400, 599],
        fallbacks: { 'gpt-4o': [{ model: 'gpt-4o-mini' }, { provider: 'azure' }, { model: 'claude-sonnet-4', provider: 'anthropic' }, { provider: 'bedrock' }, { provider: 'vertex' }] },
      },
      { maxAttempts: 5, budgetMs: 0, onStatus: list(20, (i) => 500 + i), fallbacks: Object.fromEntries(list(50, (i) => [`m${i}`, [{ model: 'x' }]])) },
    ],
    bad: [
      { maxAttempts: 0 },
      { maxAttempts: 6 },
      { initialBackoffMs: -1 },
      { maxBackoffMs: 60_001 },
      { budgetMs: 120_001 },
      { onStatus: [399] },
      { onStatus: [600] },
      { onStatus: list(21, () => 500) },
      { fallbacks: { 'gpt-4o': list(6, () => ({ model: 'x' })) } },
      { fallbacks: Object.fromEntries(list(51, (i) => [`m${i}`, [{ model: 'x' }]])) },
      { fallbacks: { 'gpt-4o': [{ provider: 'acme' }] } },
      { fallbacks: { 'gpt-4o': [{}] } },
      { jitter: true },
    ],
  },
  enforcement_mode: { ok: ['soft', 'hard'], bad: ['strict'] },
  workspace_hard_cap_enabled: { ok: [true, false], bad: ['true'] },
  ssoKeyMaxIdleDays: { ok: [1, 365, null], bad: [0, 366, 1.5, '30'] },
  sso_group_policy: {
    ok: [{ highRiskTools: list(500), requiredGroups: [rep('g', 256)], requireOboFor: [] }, {}],
    bad: [{ highRiskTools: list(501) }, { requiredGroups: [''] }, { requireOboFor: [rep('g', 257)] }, { adminGroups: [] }],
  },
  reviewHoldBypassEnabled: { ok: [true, false], bad: [0] },
  reviewHoldBypassTtlMinutes: { ok: [1, 60], bad: [0, 61, 2.5] },
  loop_review: { ok: [{ requireDistinctApprover: true }, { requireDistinctApprover: false }], bad: [{}, { requireDistinctApprover: 'yes' }, { requireDistinctApprover: true, quorum: 2 }] },
  sandboxRequirement: { ok: ['off', 'warn', 'require'], bad: ['enforce'] },
  imageProvenance: {
    ok: [
      { enabled: true, requireDigest: false, allowedRegistries: list(64, (i) => `${i}`.padEnd(256, 'r')), approvedDigests: { [rep('r', 512)]: list(256, digest) }, unverifiableAction: 'block' },
      { unverifiableAction: 'warn' },
    ],
    bad: [
      { allowedRegistries: list(65) },
      { allowedRegistries: [rep('r', 257)] },
      { approvedDigests: { repo: ['sha256:abc'] } },
      { approvedDigests: { repo: list(257, digest) } },
      { approvedDigests: { [rep('r', 513)]: [] } },
      { unverifiableAction: 'deny' },
      { signers: [] },
    ],
  },
  bypassEnforcementTier: { ok: ['rewrite', 'immutable', 'alert-only'], bad: ['ignore'] },
  anomaly_enforcement: {
    ok: [
      { enabled: true, minRepeats: 2, minConfidence: 0, action: 'HIJACK', categories: list(64, (i) => `${i}`.padEnd(128, 'c')) },
      { minRepeats: 1000, minConfidence: 1, action: 'KILL', categories: [] },
    ],
    bad: [{ minRepeats: 1 }, { minRepeats: 1001 }, { minConfidence: -0.01 }, { minConfidence: 1.01 }, { action: 'BLOCK' }, { categories: list(65) }, { categories: [rep('c', 129)] }, { categories: [''] }, { window: 5 }],
  },
  trajectory_monitor_mode: { ok: ['ACTIVE', 'PASSIVE', 'OFF'], bad: ['passive'] },
  securityProbeSampleRate: { ok: [0, 1, 0.25], bad: [-0.01, 1.01] },
  governanceCardLabelingEnabled: { ok: [true, false], bad: ['on'] },
  decisionsLogEnabled: { ok: [true, false], bad: [null] },
  enableLocalSkillAuditDelete: { ok: [true, false], bad: ['false'] },
  ciscoSkillScannerEnabled: { ok: [true, false], bad: [1] },
  semanticSkillAnalysisEnabled: { ok: [true, false], bad: [{}] },
  virusTotalSkillLookupEnabled: { ok: [true, false], bad: [[]] },
};

t.test('every settings key: each bound at its edge is accepted, past it refused with 400 naming the key, and nothing stored', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  // sso_group_policy needs a single-sign-on plan.
  await cp.db.query(`UPDATE workspaces SET plan = 'enterprise' WHERE id = $1`, [owner.workspaceId]);
  const read = async () => (await api(cp, 'GET', '/workspace/settings', { token: owner.accessToken })).body.settings;
  for (const [key, { ok, bad }] of Object.entries(CASES)) {
    for (const value of ok) {
      const res = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { [key]: value } });
      t.equal(res.status, 200, `${key} accepts ${JSON.stringify(value).slice(0, 80)}`);
    }
    const before = await read();
    for (const value of bad) {
      const res = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { [key]: value } });
      t.equal(res.status, 400, `${key} refuses ${JSON.stringify(value)?.slice(0, 80)}`);
      t.match(res.body?.error?.message, key, `the error names ${key}`);
    }
    t.same(await read(), before, `a refused ${key} stores nothing`);
  }
});

t.test('values are normalised as seed 001 says: keywords trimmed and lower-cased, candidates trimmed', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const res = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { banditKeywords: { testing: ['  PyTest '] }, routingCandidates: [' gpt-4o '] } });
  t.equal(res.status, 200);
  t.same(res.body.settings.banditKeywords.testing, ['pytest']);
  t.same(res.body.settings.routingCandidates, ['gpt-4o']);
});
