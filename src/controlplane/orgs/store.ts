import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';

export interface OrgRow {
  id: string;
  name: string;
  owner_user_id: string;
  gateway_id: string | null;
  created_at: Date;
}

export const orgView = (o: OrgRow) => ({ id: o.id, name: o.name, ownerUserId: o.owner_user_id, gatewayId: o.gateway_id, createdAt: o.created_at.toISOString() });

export const teamView = (t: { id: string; org_id: string; name: string; created_at: Date }) => ({ id: t.id, orgId: t.org_id, name: t.name, createdAt: t.created_at.toISOString() });

/**
 * The org as the caller may see it: its owner may change it; a member of any of its workspaces may
 * read it. To anyone else it does not exist (404, so ids cannot be probed).
 */
export async function orgFor(q: Queryable, principal: Principal, orgId: string | undefined, need: 'read' | 'own'): Promise<OrgRow> {
  const [org] = await q.query<OrgRow & { visible: boolean }>(
    `SELECT o.*, EXISTS (SELECT 1 FROM members m JOIN workspaces w ON w.id = m.workspace_id
       WHERE w.org_id = o.id AND m.user_id = $2 AND m.deactivated_at IS NULL) AS visible
     FROM orgs o WHERE o.id = $1`,
    [orgId, principal.userId],
  );
  const owner = org !== undefined && org.owner_user_id === principal.userId;
  if (org === undefined || (!owner && !org.visible)) throw new NotFoundError(`Org '${orgId}' not found.`);
  if (need === 'own' && !owner) throw new ForbiddenError('Only the org owner may do this.');
  return org;
}

/** A new org owned by `ownerUserId`; `workspaceId` joins it when given. */
export async function insertOrg(tx: Queryable, input: { name: string; ownerUserId: string; workspaceId?: string | undefined }): Promise<OrgRow> {
  const [org] = await tx.query<OrgRow>('INSERT INTO orgs (id, name, owner_user_id) VALUES ($1, $2, $3) RETURNING *', [newId.org(), input.name, input.ownerUserId]);
  if (input.workspaceId !== undefined) await tx.query('UPDATE workspaces SET org_id = $2 WHERE id = $1 AND org_id IS NULL', [input.workspaceId, org!.id]);
  return org!;
}

export async function insertTeam(tx: Queryable, orgId: string, name: string) {
  const [team] = await tx.query<{ id: string; org_id: string; name: string; created_at: Date }>(
    'INSERT INTO teams (id, org_id, name) VALUES ($1, $2, $3) ON CONFLICT (org_id, name) DO NOTHING RETURNING *',
    [newId.team(), orgId, name],
  );
  return team;
}
