import { FEATURE_FLAGS } from '../../config/settings.js';
import { isJsonObject } from '../../lib/json.js';

export type StoredSettings = Record<string, unknown>;

export const REDACTED = '__redacted__';
export const BYOC_SECRET_FIELDS = ['secretAccessKey', 'credentials'] as const;

/** The built-in task-type keyword lists routing uses when a workspace has not set its own. */
export const BUILT_IN_BANDIT_KEYWORDS = {
  testing: ['test', 'tests', 'pytest', 'jest', 'unittest', 'coverage', 'spec'],
  deployment: ['deploy', 'release', 'rollout', 'docker', 'kubernetes', 'helm', 'ci/cd'],
  review: ['review', 'refactor', 'lint', 'audit', 'cleanup'],
  debugging: ['debug', 'bug', 'error', 'crash', 'traceback', 'stacktrace', 'fix'],
};

/** Seed 001's defaults, for the keys that have one. Object settings fill their fields one by one. */
const SCALAR_DEFAULTS: Readonly<StoredSettings> = {
  mcpProxyFailBehavior: 'open',
  mcpProxyMode: 'per-session',
  allowLocalMemoryVaults: true,
  configBodyUpload: false,
  ssoKeyMaxIdleDays: 30,
  reviewHoldBypassEnabled: false,
  reviewHoldBypassTtlMinutes: 10,
  bypassEnforcementTier: 'rewrite',
  trajectory_monitor_mode: 'PASSIVE',
  securityProbeSampleRate: 1,
  governanceCardLabelingEnabled: true,
  decisionsLogEnabled: false,
  enableLocalSkillAuditDelete: false,
  ciscoSkillScannerEnabled: false,
  semanticSkillAnalysisEnabled: false,
  virusTotalSkillLookupEnabled: false,
};

const OBJECT_DEFAULTS: Readonly<Record<string, Record<string, unknown>>> = {
  // ff_shadow_routing has no default: it stays unset until written.
  featureFlags: Object.fromEntries(FEATURE_FLAGS.filter((f) => f !== 'ff_shadow_routing').map((f) => [f, false])),
  banditKeywords: BUILT_IN_BANDIT_KEYWORDS,
  loop_review: { requireDistinctApprover: false },
  imageProvenance: { enabled: false, requireDigest: true, allowedRegistries: [], approvedDigests: {}, unverifiableAction: 'allow' },
  anomaly_enforcement: { enabled: false, minRepeats: 3, minConfidence: 0.8, action: 'HIJACK', categories: [] },
};

/**
 * The settings as a read returns them: stored values, a default for every unset key that has one
 * (object settings field by field), keys with neither left out, byocStorage secrets redacted.
 */
export function readForm(stored: StoredSettings, byocSecretsStored: readonly string[]): StoredSettings {
  const out: StoredSettings = { ...SCALAR_DEFAULTS };
  for (const [key, defaults] of Object.entries(OBJECT_DEFAULTS)) out[key] = { ...defaults };
  for (const [key, value] of Object.entries(stored)) {
    const defaults = OBJECT_DEFAULTS[key];
    out[key] = defaults !== undefined && isJsonObject(value) ? { ...defaults, ...value } : value;
  }
  if (isJsonObject(out.sso_group_policy)) out.sso_group_policy = { highRiskTools: [], requiredGroups: [], requireOboFor: [], ...out.sso_group_policy };
  if (isJsonObject(out.byocStorage)) {
    const redacted = Object.fromEntries(byocSecretsStored.map((field) => [field, REDACTED]));
    out.byocStorage = { ...out.byocStorage, ...redacted };
  }
  return out;
}
