import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets.js';
import type { ProviderId } from '../../upstream/providers.js';

export interface StoredCredential {
  provider: ProviderId;
  fields: Record<string, string>;
  lastFour: string | null;
  updatedAt: Date;
}

/** The workspace's provider credentials, decrypted (for the gateway config and verify only). */
export async function loadCredentials(q: Queryable, secrets: SecretBox, workspaceId: string): Promise<StoredCredential[]> {
  const rows = await q.query<{ provider: ProviderId; fields_encrypted: string; last_four: string | null; updated_at: Date }>(
    'SELECT provider, fields_encrypted, last_four, updated_at FROM provider_credentials WHERE workspace_id = $1 ORDER BY provider',
    [workspaceId],
  );
  return rows.map((r) => ({ provider: r.provider, fields: JSON.parse(secrets.open(r.fields_encrypted)) as Record<string, string>, lastFour: r.last_four, updatedAt: r.updated_at }));
}
