import type { z } from 'zod';
import { hashKey } from '../../config/runtime.js';
import { configAckSchema, heartbeatSchema, type ConfigAck, type Heartbeat } from '../../config/sync-document.js';
import { recordAudit } from '../audit.js';
import { assignGatewayBody, gatewayConfigBody, registerGatewayBody, rotateBody } from '../contracts/gateways.js';
import type { Principal } from '../auth/principal.js';
import { newGatewayToken } from '../auth/tokens.js';
import { ForbiddenError } from '../errors.js';
import { newId } from '../ids.js';
import { route, type Reply, type Route } from '../router.js';
import type { Services } from '../services.js';
import { currentConfigVersion } from '../sync/config-version.js';
import { buildGatewayConfig } from '../sync/gateway-config.js';
import { assignableGateway, gatewayResolution, loadGateway, type GatewayRow } from '../gateways/store.js';

/** A gateway that has not sent a heartbeat for this long reads as offline. */
const OFFLINE_AFTER_MS = 90_000;

export function gatewayStatus(row: GatewayRow, currentVersion: number, now: number) {
  return {
    id: row.id,
    name: row.name,
    workspaceId: row.workspace_id,
    byokRequired: row.byok_required,
    deploymentTarget: row.deployment_target,
    url: row.url,
    tokenLastFour: row.token_last_four,
    tokenRotatedAt: row.token_rotated_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    online: row.last_heartbeat_at !== null && now - row.last_heartbeat_at.getTime() < OFFLINE_AFTER_MS,
    lastHeartbeatAt: row.last_heartbeat_at?.toISOString() ?? null,
    lastHeartbeat: row.last_heartbeat,
    currentVersion,
    appliedVersion: row.applied_version,
    inSync: row.applied_version === currentVersion,
    lastAck: row.last_ack,
  };
}

/** A gateway token reaches only its own gateway. */
function assertOwnGateway(principal: Principal, id: string | undefined): void {
  if (principal.gateway !== undefined && principal.gateway.id !== id) throw new ForbiddenError("A gateway token reaches only its own gateway.");
}

/** The document differs by whether it carries provider secrets, so its tag does too. */
const etagOf = (gatewayId: string, version: number, withSecrets: boolean) => `"${gatewayId}-v${version}${withSecrets ? '' : '-nosecrets'}"`;

/** Issues a new token for the gateway; the old one works for `graceSeconds` more (or stops now). */
async function rotateToken(services: Services, principal: Principal, id: string | undefined, graceSeconds: number, kind: 'gateway.token_rotated' | 'gateway.token_self_rotated') {
  const at = new Date(services.clock());
  const token = newGatewayToken(id ?? '');
  const tokenHash = hashKey(token);
  // The grace is kept in the database's time, which is also what the token check compares with.
  const validUntil = await services.db.transaction(async (tx) => {
    const gateway = await loadGateway(tx, principal.workspaceId, id, true);
    const [row] = await tx.query<{ previous_token_valid_until: Date | null }>(
      `UPDATE gateways SET token_hash = $2, token_last_four = $3, token_rotated_at = $4,
         previous_token_hash = CASE WHEN $5::int > 0 THEN token_hash END,
         previous_token_valid_until = CASE WHEN $5::int > 0 THEN now() + make_interval(secs => $5::int) END
       WHERE id = $1 RETURNING previous_token_valid_until`,
      [gateway.id, tokenHash, token.slice(-4), at.toISOString(), graceSeconds],
    );
    await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind, detail: { gatewayId: gateway.id, graceSeconds }, at });
    return row!.previous_token_valid_until;
  });
  if (graceSeconds === 0) services.sockets.gatewayTokensEnded(id!, tokenHash);
  return { body: { id, token, tokenLastFour: token.slice(-4), previousTokenValidUntil: validUntil?.toISOString() ?? null } };
}

export const gatewayRoutes: Route[] = [
  route.authed<z.infer<typeof registerGatewayBody>>('OA', {
    method: 'POST',
    path: '/gateways',
    statuses: [201, 400, 401, 403],
    summary: "Register a gateway (a proxy or a fleet of proxies sharing one config); its gwt_ token is shown once",
    body: registerGatewayBody,
    handler: async ({ services, principal, body }) => {
      const id = newId.gateway();
      const token = newGatewayToken(id);
      const at = new Date(services.clock());
      const row = await services.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO gateways (id, workspace_id, name, byok_required, deployment_target, url, registered_by, token_hash, token_last_four)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [id, principal.workspaceId, body.name, body.byokRequired, body.deploymentTarget, body.url ?? null, principal.memberId, hashKey(token), token.slice(-4)],
        );
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'gateway.registered', detail: { gatewayId: id, name: body.name, deploymentTarget: body.deploymentTarget }, at });
        return loadGateway(tx, principal.workspaceId, id);
      });
      return { status: 201, body: { ...gatewayStatus(row, await currentConfigVersion(services.db, principal.workspaceId), services.clock()), token } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways',
    summary: "The workspace's gateways and their sync status (revoked ones are not listed)",
    handler: async ({ services, principal }) => {
      const rows = await services.db.query<GatewayRow>('SELECT * FROM gateways WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at', [principal.workspaceId]);
      const version = await currentConfigVersion(services.db, principal.workspaceId);
      return { body: { gateways: rows.map((r) => gatewayStatus(r, version, services.clock())) } };
    },
  }),
  route.authed('OA', {
    method: 'DELETE',
    path: '/gateways/:id',
    summary: 'Revoke a gateway: its token stops at once, its config is no longer served and its push socket closes',
    handler: async ({ services, principal, params }) => {
      const at = new Date(services.clock());
      await services.db.transaction(async (tx) => {
        const gateway = await loadGateway(tx, principal.workspaceId, params.id, true);
        await tx.query('UPDATE gateways SET revoked_at = $2, token_hash = NULL, previous_token_hash = NULL WHERE id = $1', [gateway.id, at.toISOString()]);
        await tx.query('UPDATE workspaces SET gateway_id = NULL WHERE gateway_id = $1', [gateway.id]);
        await tx.query('UPDATE orgs SET gateway_id = NULL WHERE gateway_id = $1', [gateway.id]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'gateway.revoked', detail: { gatewayId: gateway.id, name: gateway.name }, at });
      });
      services.sockets.gatewayTokensEnded(params.id!);
      return { body: { revoked: true, id: params.id } };
    },
  }),
  route.authed<z.infer<typeof gatewayConfigBody>>('OA', {
    method: 'PATCH',
    path: '/gateways/:id/config',
    summary: "Change a gateway's own settings (name, bring-your-own-key enforcement, deployment target, url); the gateway takes them with the next push",
    body: gatewayConfigBody,
    handler: async ({ services, principal, params, body }) => {
      const at = new Date(services.clock());
      const { result, version } = await services.changeConfig(principal.workspaceId, async (tx) => {
        const before = await loadGateway(tx, principal.workspaceId, params.id, true);
        await tx.query(
          `UPDATE gateways SET name = COALESCE($2, name), byok_required = COALESCE($3, byok_required), deployment_target = COALESCE($4, deployment_target),
             url = CASE WHEN $5 THEN $6 ELSE url END WHERE id = $1`,
          [before.id, body.name ?? null, body.byokRequired ?? null, body.deploymentTarget ?? null, body.url !== undefined, body.url ?? null],
        );
        const after = await loadGateway(tx, principal.workspaceId, params.id);
        const pick = (g: GatewayRow) => ({ name: g.name, byokRequired: g.byok_required, deploymentTarget: g.deployment_target, url: g.url });
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'gateway.config_changed', detail: { gatewayId: before.id, before: pick(before), after: pick(after) }, at });
        return after;
      });
      return { body: gatewayStatus(result, version, services.clock()) };
    },
  }),
  route.authed<z.infer<typeof rotateBody>>('OA', {
    method: 'POST',
    path: '/gateways/:id/rotate',
    summary: "Issue a new gwt_ token for a gateway; the old one stops at once, or after graceSeconds",
    body: rotateBody,
    handler: ({ services, principal, params, body }) => rotateToken(services, principal, params.id, body.graceSeconds, 'gateway.token_rotated'),
  }),
  route.authed<z.infer<typeof rotateBody>>('A', {
    method: 'POST',
    path: '/gateways/:id/self-rotate',
    gateway: true,
    statuses: [200, 400, 401, 403, 404],
    summary: 'A gateway rotates its own token with it (a member may not: that is /rotate)',
    body: rotateBody,
    handler: ({ services, principal, params, body }) => {
      if (principal.gateway === undefined) throw new ForbiddenError('Only a gateway rotates its own token here, with its gwt_ token; members use POST /gateways/:id/rotate.');
      assertOwnGateway(principal, params.id);
      return rotateToken(services, principal, params.id, body.graceSeconds, 'gateway.token_self_rotated');
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways/:id/config',
    gateway: true,
    statuses: [200, 304, 400, 401, 403, 404],
    summary: 'The whole config the gateway needs, versioned; If-None-Match with the current ETag answers 304',
    handler: async ({ services, principal, params, headers }): Promise<Reply> => {
      assertOwnGateway(principal, params.id);
      const gateway = await loadGateway(services.db, principal.workspaceId, params.id);
      const version = await currentConfigVersion(services.db, principal.workspaceId);
      // Decrypted provider credentials go only to the gateway's own token or an owner's or admin's
      // key: any member may read the rest of its config, but a VIEWER's key must not yield the secrets.
      const withSecrets = principal.gateway !== undefined || principal.role === 'OWNER' || principal.role === 'ADMIN';
      const etag = etagOf(gateway.id, version, withSecrets);
      if (headers.ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) return { status: 304, headers: { etag } };
      const document = await buildGatewayConfig(services.db, services.secrets, {
        id: gateway.id,
        workspaceId: gateway.workspace_id,
        byokRequired: gateway.byok_required,
        withSecrets,
      });
      return { body: document, headers: { etag: etagOf(gateway.id, document.version, withSecrets), 'cache-control': 'no-cache' } };
    },
  }),
  route.authed<ConfigAck>('A', {
    method: 'POST',
    path: '/gateways/:id/config-ack',
    gateway: true,
    summary: 'The gateway reports a config version applied, or rejected with the reason',
    body: configAckSchema,
    handler: async ({ services, principal, params, body }) => {
      assertOwnGateway(principal, params.id);
      await loadGateway(services.db, principal.workspaceId, params.id);
      const ack = { ...body, at: new Date().toISOString() };
      await services.db.query(
        `UPDATE gateways SET last_ack = $2, applied_version = CASE WHEN $3 THEN $4::int ELSE applied_version END WHERE id = $1`,
        [params.id, JSON.stringify(ack), body.status === 'applied', body.version],
      );
      if (body.status === 'rejected') services.logger.warn({ gateway: params.id, version: body.version, reason: body.reason }, 'gateway rejected a config');
      return { body: { acknowledged: true } };
    },
  }),
  route.authed<Heartbeat>('A', {
    method: 'POST',
    path: '/gateways/:id/heartbeat',
    gateway: true,
    summary: "The gateway's liveness and counters; answers the workspace's current config version",
    body: heartbeatSchema,
    handler: async ({ services, principal, params, body }) => {
      assertOwnGateway(principal, params.id);
      await loadGateway(services.db, principal.workspaceId, params.id);
      await services.db.query('UPDATE gateways SET last_heartbeat_at = $3, last_heartbeat = $2 WHERE id = $1', [params.id, JSON.stringify(body), new Date(services.clock()).toISOString()]);
      return { body: { ok: true, configVersion: await currentConfigVersion(services.db, principal.workspaceId) } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways/:id/status',
    gateway: true,
    summary: 'Liveness, applied and current config version, last ack',
    handler: async ({ services, principal, params }) => {
      assertOwnGateway(principal, params.id);
      const row = await loadGateway(services.db, principal.workspaceId, params.id);
      return { body: gatewayStatus(row, await currentConfigVersion(services.db, principal.workspaceId), services.clock()) };
    },
  }),
  route.authed<z.infer<typeof assignGatewayBody>>('OA', {
    method: 'PATCH',
    path: '/workspace/gateway',
    summary: "Assign the gateway this workspace's agents use (one of its own or of its org's workspaces), or null to fall back to the org's",
    body: assignGatewayBody,
    statuses: [200, 400, 401, 403, 404],
    handler: async ({ services, principal, body }) => {
      const at = new Date(services.clock());
      await services.db.transaction(async (tx) => {
        const [workspace] = await tx.query<{ org_id: string | null; gateway_id: string | null }>('SELECT org_id, gateway_id FROM workspaces WHERE id = $1 FOR UPDATE', [principal.workspaceId]);
        if (body.gatewayId !== null) await assignableGateway(tx, body.gatewayId, { workspaceId: principal.workspaceId, orgId: workspace!.org_id });
        await tx.query('UPDATE workspaces SET gateway_id = $2 WHERE id = $1', [principal.workspaceId, body.gatewayId]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'workspace.gateway_assigned', detail: { before: workspace!.gateway_id, after: body.gatewayId }, at });
      });
      return { body: await gatewayResolution(services.db, principal.workspaceId) };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/workspace/gateway-resolution',
    summary: "The gateway this workspace's agents use: the workspace's own assignment, else its org's, else its only gateway, else none",
    handler: async ({ services, principal }) => ({ body: await gatewayResolution(services.db, principal.workspaceId) }),
  }),
];
