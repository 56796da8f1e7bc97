import { z } from 'zod';
import { READ_ONLY_SETTINGS, REMOVED_SETTINGS, workspaceSettingsSchema, type WorkspaceSettings } from '../../config/settings.js';
import { anomalySettingsIssues } from '../../policy/anomaly/anomaly-policy.js';
import { COST_POSTURES, ownedValues, POSTURE_LABEL_KEYS, SECURITY_POSTURES } from './postures.js';
import { BYOC_SECRET_FIELDS, REDACTED, type StoredSettings } from './read-form.js';

const REMOVED = new Set<string>(REMOVED_SETTINGS);
const READ_ONLY = new Set<string>(READ_ONLY_SETTINGS);
const NULL_CLEARS = new Set(['sso_group_policy', 'piiDetectors', 'upstreamRetry']);

/**
 * A PUT /workspace/settings body: a non-empty object whose keys are neither removed nor read-only,
 * then seed 001's schema (unknown keys and fields named, every bound checked), and no anomaly
 * override above its detector's ceiling (an override may lower a detector, never raise it).
 */
export const settingsWriteBody = z
  .record(z.string(), z.unknown(), { message: 'the body must be a JSON object of settings keys' })
  .superRefine((body, ctx) => {
    if (Object.keys(body).length === 0) ctx.addIssue({ code: 'custom', message: 'the body is empty: send one or more settings keys' });
    for (const key of Object.keys(body)) {
      if (REMOVED.has(key)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} has been removed from the product and can no longer be set` });
      if (READ_ONLY.has(key)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} is read-only: the server sets it` });
    }
  })
  .pipe(workspaceSettingsSchema)
  .superRefine((settings, ctx) => {
    for (const message of anomalySettingsIssues(settings)) ctx.addIssue({ code: 'custom', path: ['mcpAnomalyOverrides'], message });
  });

export type ByocSecrets = Partial<Record<(typeof BYOC_SECRET_FIELDS)[number], string>>;

export interface SettingsState {
  settings: StoredSettings;
  byocSecrets: ByocSecrets;
}

export interface SettingChange {
  key: string;
  before: unknown;
  after: unknown;
}

/**
 * Applies a validated write (rule 4 of seed 001): only sent keys change, each replaced whole, except
 * featureFlags (merged flag by flag), byocStorage (stored secrets kept when omitted or sent as
 * `__redacted__`) and null on sso_group_policy, piiDetectors or upstreamRetry (removes the value).
 * Then the server-kept keys follow: ssoKeyGateEnabledAt and the applied-posture labels.
 */
export function applySettingsWrite(current: SettingsState, update: WorkspaceSettings, now: Date): SettingsState {
  const settings: StoredSettings = { ...current.settings };
  let byocSecrets = current.byocSecrets;
  for (const [key, value] of Object.entries(update)) {
    if (value === null && NULL_CLEARS.has(key)) delete settings[key];
    else if (key === 'featureFlags') settings.featureFlags = { ...((settings.featureFlags ?? {}) as object), ...(value as object) };
    else if (key === 'byocStorage') {
      const { stored, secrets } = splitByocSecrets(value as Record<string, unknown>, current.byocSecrets);
      settings.byocStorage = stored;
      byocSecrets = secrets;
    } else settings[key] = value;
  }
  stampSsoKeyGate(current.settings, settings, now);
  dropOverriddenPostures(current.settings, settings);
  return { settings, byocSecrets };
}

/** Records one posture's label after its settings were applied through applySettingsWrite. */
export function labelPosture(settings: StoredSettings, kind: keyof typeof POSTURE_LABEL_KEYS, label: string): StoredSettings {
  return { ...settings, [POSTURE_LABEL_KEYS[kind]]: label };
}

function splitByocSecrets(sent: Record<string, unknown>, kept: ByocSecrets) {
  const stored: Record<string, unknown> = { ...sent };
  const secrets: ByocSecrets = {};
  for (const field of BYOC_SECRET_FIELDS) {
    const value = sent[field];
    delete stored[field];
    if (typeof value === 'string' && value !== REDACTED) secrets[field] = value;
    else if (kept[field] !== undefined) secrets[field] = kept[field];
  }
  return { stored, secrets };
}

function stampSsoKeyGate(before: StoredSettings, after: StoredSettings, now: Date): void {
  const was = before.ssoKeyMaxIdleDays;
  const is = after.ssoKeyMaxIdleDays;
  if (typeof is === 'number' && typeof was !== 'number') after.ssoKeyGateEnabledAt = now.toISOString();
  else if (is === null) delete after.ssoKeyGateEnabledAt;
}

function dropOverriddenPostures(before: StoredSettings, after: StoredSettings): void {
  const catalogs = { security: SECURITY_POSTURES, cost: COST_POSTURES } as const;
  for (const kind of ['security', 'cost'] as const) {
    const labelKey = POSTURE_LABEL_KEYS[kind];
    const posture = (catalogs[kind] as Record<string, WorkspaceSettings>)[String(before[labelKey])];
    if (posture !== undefined && ownedValues(before, posture) !== ownedValues(after, posture)) delete after[labelKey];
  }
}

/** Top-level keys whose value differs, for the audit timeline (byocStorage secrets never shown). */
export function diffSettings(before: StoredSettings, after: StoredSettings): SettingChange[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys]
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .sort()
    .map((key) => ({ key, before: before[key] ?? null, after: after[key] ?? null }));
}
