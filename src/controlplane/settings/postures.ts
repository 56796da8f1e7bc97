import type { WorkspaceSettings } from '../../config/settings.js';
import type { StoredSettings } from './read-form.js';

/** A named bundle of settings that POST /workspace/posture applies in one write. */
export type Posture = Readonly<WorkspaceSettings>;

export const SECURITY_POSTURES: Readonly<Record<'strict' | 'balanced', Posture>> = {
  strict: {
    mcpProxyFailBehavior: 'closed',
    mcpDefaultPolicy: 'deny',
    mcpInjectionAction: 'block',
    mcpAnomalyMode: 'enforce',
    piiDetectors: { 'pii.card': 'block', 'pii.iban': 'block', 'pii.ssn': 'block', 'pii.email': 'redact', 'pii.phone': 'redact' },
    sandboxRequirement: 'require',
    featureFlags: { ff_sql_drop_strict_block: true },
  },
  balanced: {
    mcpProxyFailBehavior: 'open',
    mcpDefaultPolicy: 'allow',
    mcpInjectionAction: 'warn',
    mcpAnomalyMode: 'enforce',
    piiDetectors: { 'pii.card': 'redact', 'pii.iban': 'redact', 'pii.ssn': 'redact', 'pii.email': 'off', 'pii.phone': 'off' },
    sandboxRequirement: 'warn',
    featureFlags: { ff_sql_drop_strict_block: false },
  },
};

export const COST_POSTURES: Readonly<Record<'economy' | 'balanced', Posture>> = {
  economy: {
    enforcement_mode: 'hard',
    workspace_hard_cap_enabled: true,
    featureFlags: { ff_bandit_routing: true, ff_response_cache_exact: true },
  },
  balanced: {
    enforcement_mode: 'soft',
    workspace_hard_cap_enabled: false,
    featureFlags: { ff_bandit_routing: false, ff_response_cache_exact: true },
  },
};

export const POSTURE_LABEL_KEYS = { security: 'appliedSecurityPosture', cost: 'appliedCostPosture' } as const;

/** The values of the settings a posture owns (its feature flags one by one), for change detection. */
export function ownedValues(settings: StoredSettings, posture: Posture): string {
  const flags = (settings.featureFlags ?? {}) as Record<string, unknown>;
  return JSON.stringify(
    Object.keys(posture).map((key) =>
      key === 'featureFlags' ? Object.keys(posture.featureFlags ?? {}).map((flag) => flags[flag] ?? null) : (settings[key] ?? null),
    ),
  );
}
