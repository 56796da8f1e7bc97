import type { Queryable } from '../db/database.js';

/** Bumps and returns the workspace's config version; every change a gateway must pick up calls it. */
export async function bumpConfigVersion(tx: Queryable, workspaceId: string): Promise<number> {
  const [row] = await tx.query<{ config_version: number }>('UPDATE workspaces SET config_version = config_version + 1 WHERE id = $1 RETURNING config_version', [workspaceId]);
  if (row === undefined) throw new Error(`workspace ${workspaceId} does not exist`);
  return row.config_version;
}

export async function currentConfigVersion(db: Queryable, workspaceId: string): Promise<number> {
  const [row] = await db.query<{ config_version: number }>('SELECT config_version FROM workspaces WHERE id = $1', [workspaceId]);
  return row?.config_version ?? 0;
}
