import { z } from 'zod';
import { configAckSchema, heartbeatSchema, type ConfigAck, type Heartbeat } from '../../config/sync-document.js';
import type { Queryable } from '../db/database.js';
import { NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import { route, type Reply, type Route } from '../router.js';
import { currentConfigVersion } from '../sync/config-version.js';
import { buildGatewayConfig } from '../sync/gateway-config.js';

const registerBody = z.strictObject({
  name: z.string().min(1).max(128),
  /** Refuse (402 byok_required) a provider the workspace holds no credential for. */
  byokRequired: z.boolean().default(false),
});

/** A gateway that has not sent a heartbeat for this long reads as offline. */
const OFFLINE_AFTER_MS = 90_000;

interface GatewayRow {
  id: string;
  workspace_id: string;
  name: string;
  byok_required: boolean;
  applied_version: number | null;
  last_ack: (ConfigAck & { at: string }) | null;
  last_heartbeat_at: Date | null;
  last_heartbeat: Heartbeat | null;
  created_at: Date;
}

async function loadGateway(q: Queryable, workspaceId: string, id: string | undefined): Promise<GatewayRow> {
  const [row] = await q.query<GatewayRow>('SELECT * FROM gateways WHERE id = $1 AND workspace_id = $2', [id, workspaceId]);
  if (row === undefined) throw new NotFoundError(`Gateway '${id}' not found in this workspace.`);
  return row;
}

function gatewayStatus(row: GatewayRow, currentVersion: number, now = Date.now()) {
  return {
    id: row.id,
    name: row.name,
    workspaceId: row.workspace_id,
    byokRequired: row.byok_required,
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

/** The document differs by whether it carries provider secrets, so its tag does too. */
const etagOf = (gatewayId: string, version: number, withSecrets: boolean) => `"${gatewayId}-v${version}${withSecrets ? '' : '-nosecrets'}"`;

export const gatewayRoutes: Route[] = [
  route.authed<z.infer<typeof registerBody>>('OA', {
    method: 'POST',
    path: '/gateways',
    statuses: [201, 400, 401, 403],
    summary: 'Register a gateway (a proxy or a fleet of proxies sharing one config)',
    body: registerBody,
    handler: async ({ services, principal, body }) => {
      const id = newId.gateway();
      await services.db.query('INSERT INTO gateways (id, workspace_id, name, byok_required) VALUES ($1, $2, $3, $4)', [id, principal.workspaceId, body.name, body.byokRequired]);
      const row = await loadGateway(services.db, principal.workspaceId, id);
      return { status: 201, body: gatewayStatus(row, await currentConfigVersion(services.db, principal.workspaceId), services.clock()) };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways',
    summary: "The workspace's gateways and their sync status",
    handler: async ({ services, principal }) => {
      const rows = await services.db.query<GatewayRow>('SELECT * FROM gateways WHERE workspace_id = $1 ORDER BY created_at', [principal.workspaceId]);
      const version = await currentConfigVersion(services.db, principal.workspaceId);
      return { body: { gateways: rows.map((r) => gatewayStatus(r, version, services.clock())) } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways/:id/config',
    statuses: [200, 304, 400, 401, 404],
    summary: 'The whole config the gateway needs, versioned; If-None-Match with the current ETag answers 304',
    handler: async ({ services, principal, params, headers }): Promise<Reply> => {
      const gateway = await loadGateway(services.db, principal.workspaceId, params.id);
      const version = await currentConfigVersion(services.db, principal.workspaceId);
      // Decrypted provider credentials go only to a gateway syncing with an owner's or admin's key:
      // any member may read the rest of its config, but a VIEWER's key must not yield the secrets.
      const withSecrets = principal.role === 'OWNER' || principal.role === 'ADMIN';
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
    summary: 'The gateway reports a config version applied, or rejected with the reason',
    body: configAckSchema,
    handler: async ({ services, principal, params, body }) => {
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
    summary: "The gateway's liveness and counters; answers the workspace's current config version",
    body: heartbeatSchema,
    handler: async ({ services, principal, params, body }) => {
      await loadGateway(services.db, principal.workspaceId, params.id);
      await services.db.query('UPDATE gateways SET last_heartbeat_at = $3, last_heartbeat = $2 WHERE id = $1', [params.id, JSON.stringify(body), new Date(services.clock()).toISOString()]);
      return { body: { ok: true, configVersion: await currentConfigVersion(services.db, principal.workspaceId) } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/gateways/:id/status',
    summary: 'Liveness, applied and current config version, last ack',
    handler: async ({ services, principal, params }) => {
      const row = await loadGateway(services.db, principal.workspaceId, params.id);
      return { body: gatewayStatus(row, await currentConfigVersion(services.db, principal.workspaceId), services.clock()) };
    },
  }),
];
