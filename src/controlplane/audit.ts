import type { Queryable } from './db/database.js';

/**
 * Records one change to a workspace's configuration other than a settings key (a policy, a WASM
 * rule); the audit timeline lists these beside the settings history, `key` naming what changed.
 */
export async function recordConfigChange(
  tx: Queryable,
  change: { workspaceId: string; memberId: string; key: string; action: string; before: unknown; after: unknown },
): Promise<void> {
  await tx.query('INSERT INTO audit_events (workspace_id, member_id, kind, detail) VALUES ($1, $2, $3, $4)', [
    change.workspaceId,
    change.memberId,
    'config.changed',
    JSON.stringify({ key: change.key, action: change.action, before: change.before, after: change.after }),
  ]);
}
