import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets.js';
import { BYOC_SECRET_FIELDS, readForm, type StoredSettings } from './read-form.js';
import { diffSettings, type ByocSecrets, type SettingsState } from './write.js';

export interface LoadedSettings extends SettingsState {
  plan: string;
}

/** The workspace's stored settings, locked for update when read inside a transaction. */
export async function loadSettings(q: Queryable, secrets: SecretBox, workspaceId: string, forUpdate = false): Promise<LoadedSettings> {
  const [row] = await q.query<{ settings: StoredSettings; byoc_secrets: string | null; plan: string }>(
    `SELECT settings, byoc_secrets, plan FROM workspaces WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [workspaceId],
  );
  if (row === undefined) throw new Error(`workspace ${workspaceId} does not exist`);
  const byocSecrets = row.byoc_secrets === null ? {} : (JSON.parse(secrets.open(row.byoc_secrets)) as ByocSecrets);
  return { settings: row.settings, byocSecrets, plan: row.plan };
}

export function settingsReadForm(state: SettingsState): StoredSettings {
  return readForm(state.settings, BYOC_SECRET_FIELDS.filter((f) => state.byocSecrets[f] !== undefined));
}

/**
 * Stores the new state and records one settings-history event per changed key (a rotated
 * byocStorage secret counts as a byocStorage change; its value is never recorded).
 */
export async function saveSettings(
  tx: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  actorMemberId: string,
  before: SettingsState,
  after: SettingsState,
): Promise<void> {
  const sealed = Object.keys(after.byocSecrets).length === 0 ? null : secrets.seal(JSON.stringify(after.byocSecrets));
  await tx.query('UPDATE workspaces SET settings = $2, byoc_secrets = $3 WHERE id = $1', [workspaceId, JSON.stringify(after.settings), sealed]);
  const changes = diffSettings(settingsReadForm(before), settingsReadForm(after));
  const secretsRotated = JSON.stringify(before.byocSecrets) !== JSON.stringify(after.byocSecrets);
  if (secretsRotated && !changes.some((c) => c.key === 'byocStorage')) {
    changes.push({ key: 'byocStorage', before: settingsReadForm(before).byocStorage ?? null, after: settingsReadForm(after).byocStorage ?? null });
  }
  for (const change of changes) {
    await tx.query('INSERT INTO audit_events (workspace_id, member_id, kind, detail) VALUES ($1, $2, $3, $4)', [
      workspaceId,
      actorMemberId,
      'settings.changed',
      JSON.stringify({ ...change, ...(change.key === 'byocStorage' && secretsRotated ? { secretsRotated: true } : {}) }),
    ]);
  }
}
