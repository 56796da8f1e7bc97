import type { ConfigAck, Heartbeat } from '../../config/sync-document.js';
import type { Queryable } from '../db/database.js';
import { NotFoundError } from '../errors.js';

export interface GatewayRow {
  id: string;
  workspace_id: string;
  name: string;
  byok_required: boolean;
  deployment_target: string;
  url: string | null;
  token_last_four: string | null;
  token_rotated_at: Date | null;
  applied_version: number | null;
  last_ack: (ConfigAck & { at: string }) | null;
  last_heartbeat_at: Date | null;
  last_heartbeat: Heartbeat | null;
  created_at: Date;
}

/** A live (not revoked) gateway of the workspace, locked for the transaction when `forUpdate`; else 404. */
export async function loadGateway(q: Queryable, workspaceId: string, id: string | undefined, forUpdate = false): Promise<GatewayRow> {
  const [row] = await q.query<GatewayRow>(`SELECT * FROM gateways WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`, [id, workspaceId]);
  if (row === undefined) throw new NotFoundError(`Gateway '${id}' not found in this workspace.`);
  return row;
}

/**
 * A gateway a workspace (or org) may be assigned: live, and registered in that workspace or, when
 * there is an org, in any workspace of the org. Anything else reads as not found.
 */
export async function assignableGateway(q: Queryable, gatewayId: string, scope: { workspaceId?: string; orgId: string | null }): Promise<void> {
  const [row] = await q.query(
    `SELECT 1 FROM gateways g JOIN workspaces w ON w.id = g.workspace_id
     WHERE g.id = $1 AND g.revoked_at IS NULL AND (w.id = $2 OR ($3::text IS NOT NULL AND w.org_id = $3))`,
    [gatewayId, scope.workspaceId ?? null, scope.orgId],
  );
  if (row === undefined) throw new NotFoundError(`Gateway '${gatewayId}' not found in this ${scope.workspaceId === undefined ? 'org' : 'workspace or its org'}.`);
}

export type ResolutionSource = 'workspace' | 'org' | 'only_gateway' | 'none';

/**
 * The gateway a workspace's agents use: its own assignment, else its org's, else the one gateway it
 * has registered (when it has exactly one), else none.
 */
export async function gatewayResolution(q: Queryable, workspaceId: string) {
  const [row] = await q.query<{ ws_gateway: string | null; org_id: string | null; org_gateway: string | null }>(
    'SELECT w.gateway_id AS ws_gateway, w.org_id, o.gateway_id AS org_gateway FROM workspaces w LEFT JOIN orgs o ON o.id = w.org_id WHERE w.id = $1',
    [workspaceId],
  );
  let source: ResolutionSource = 'none';
  let gatewayId: string | null = null;
  if (row?.ws_gateway) [source, gatewayId] = ['workspace', row.ws_gateway];
  else if (row?.org_gateway) [source, gatewayId] = ['org', row.org_gateway];
  else {
    const own = await q.query<{ id: string }>('SELECT id FROM gateways WHERE workspace_id = $1 AND revoked_at IS NULL LIMIT 2', [workspaceId]);
    if (own.length === 1) [source, gatewayId] = ['only_gateway', own[0]!.id];
  }
  const [gateway] =
    gatewayId === null ? [] : await q.query<{ id: string; name: string; url: string | null; deployment_target: string; workspace_id: string }>('SELECT id, name, url, deployment_target, workspace_id FROM gateways WHERE id = $1', [gatewayId]);
  return {
    workspaceId,
    orgId: row?.org_id ?? null,
    source,
    gateway: gateway === undefined ? null : { id: gateway.id, name: gateway.name, url: gateway.url, deploymentTarget: gateway.deployment_target, workspaceId: gateway.workspace_id },
  };
}
