import { z } from 'zod';
import { deviceReportSchema, redactMcpUrl, type DeviceReport } from '../../config/inventory-report.js';
import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { NotFoundError } from '../errors.js';
import { emitEvent } from '../events/emit.js';
import { newId } from '../ids.js';
import { harnessStatus, NOT_REPORTING_AFTER, toCsv } from '../inventory/status.js';
import { route, type Reply, type Route } from '../router.js';

interface DeviceRow {
  id: string;
  fingerprint: string;
  member_id: string | null;
  report: DeviceReport;
  first_seen_at: Date;
  last_report_at: Date;
  disconnected_at: Date | null;
}

/** Seed 002: OWNER, ADMIN and EM see every machine; a DEVELOPER the machines its own credentials reported (a VIEWER none: the routes are OAED). */
function visibility(principal: Principal): { all: boolean } {
  return { all: principal.role !== 'DEVELOPER' };
}

async function visibleDevices(q: Queryable, principal: Principal, deviceId?: string): Promise<DeviceRow[]> {
  const { all } = visibility(principal);
  return q.query<DeviceRow>(
    `SELECT id, fingerprint, member_id, report, first_seen_at, last_report_at, disconnected_at FROM devices
     WHERE workspace_id = $1 AND retired_at IS NULL AND ($2::boolean OR member_id = $3) AND ($4::text IS NULL OR id = $4) ORDER BY last_report_at DESC, id`,
    [principal.workspaceId, all, principal.memberId, deviceId ?? null],
  );
}

function deviceView(row: DeviceRow, now: number) {
  const m = row.report.machine;
  const disconnected = row.disconnected_at !== null && row.disconnected_at >= row.last_report_at;
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    hostname: m.hostname,
    platform: m.platform,
    cliVersion: m.cliVersion,
    workspaceFolder: m.workspaceFolder,
    memberId: row.member_id,
    firstSeenAt: row.first_seen_at.toISOString(),
    lastReportAt: row.last_report_at.toISOString(),
    state: disconnected ? 'Disconnected' : now - row.last_report_at.getTime() > NOT_REPORTING_AFTER ? 'Not reporting' : 'Reporting',
  };
}

function harnessRows(row: DeviceRow, now: number) {
  const disconnected = row.disconnected_at !== null && row.disconnected_at >= row.last_report_at;
  return row.report.harnesses.map((h) => ({ deviceId: row.id, hostname: row.report.machine.hostname, ...h, ...harnessStatus(h, disconnected, now) }));
}

function mcpRows(row: DeviceRow) {
  return row.report.mcpServers.map((s) => ({ deviceId: row.id, hostname: row.report.machine.hostname, ...s, status: s.fronted ? 'Governed' : 'Ungoverned' }));
}

const filters = z.strictObject({
  status: z.enum(['Ungoverned', 'Gate stale', 'Unverified', 'Governed']).optional(),
  harness: z.string().min(1).max(64).optional(),
  device: z.string().min(1).max(64).optional(),
  q: z.string().min(1).max(256).optional(),
  format: z.enum(['json', 'csv']).default('json'),
});
type Filters = z.infer<typeof filters>;

const matchesQ = (q: string | undefined, ...fields: Array<string | null>) => q === undefined || fields.some((f) => f !== null && f.toLowerCase().includes(q.toLowerCase()));

function listReply<T extends Record<string, unknown>>(rows: T[], format: 'json' | 'csv', columns: ReadonlyArray<keyof T & string>, name: string): Reply {
  if (format === 'json') return { body: { [name]: rows } };
  return {
    body: toCsv(columns, rows.map((r) => columns.map((c) => r[c]))),
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}.csv"` },
  };
}

/**
 * Sends `inventory.ungoverned.detected` once per machine and item: an item that disappears and
 * returns, or whose status only changes with time, sends nothing new.
 */
async function ungovernedEvents(tx: Queryable, at: Date, workspaceId: string, deviceId: string, report: DeviceReport): Promise<void> {
  const items = [
    ...report.harnesses.filter((h) => h.gateKind === 'none' || (h.gateKind === 'hook' && !h.gateFileOnDisk)).map((h) => ({ kind: 'harness', name: h.type })),
    ...report.mcpServers.filter((s) => !s.fronted).map((s) => ({ kind: 'mcp_server', name: `${s.harness}/${s.name}` })),
  ];
  for (const item of items) {
    await emitEvent(tx, at, {
      workspaceId,
      kind: 'inventory.ungoverned.detected',
      severity: 'MEDIUM',
      dedupeKey: `inventory.ungoverned:${deviceId}:${item.kind}:${item.name}`,
      data: { deviceId, hostname: report.machine.hostname, ...item },
    });
  }
}

export const inventoryRoutes: Route[] = [
  route.authed<DeviceReport>('A', {
    method: 'POST',
    path: '/devices/report',
    summary: "A machine's inventory (svc connect): upserted on the workspace and the machine's fingerprint; MCP URLs stripped of credentials again",
    body: deviceReportSchema,
    handler: async ({ services, principal, body }) => {
      const at = new Date(services.clock());
      // Credentials stripped a second time, whatever the machine sent.
      const report: DeviceReport = { ...body, mcpServers: body.mcpServers.map((s) => ({ ...s, url: s.url === null ? null : redactMcpUrl(s.url) })) };
      const id = await services.db.transaction(async (tx) => {
        const [row] = await tx.query<{ id: string }>(
          `INSERT INTO devices (id, workspace_id, fingerprint, member_id, report, first_seen_at, last_report_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
           ON CONFLICT (workspace_id, fingerprint) DO UPDATE SET member_id = $4, report = $5, last_report_at = $6, retired_at = NULL,
             disconnected_at = CASE WHEN $7::boolean THEN $6 ELSE NULL END
           RETURNING id`,
          [newId.device(), principal.workspaceId, body.machine.fingerprint, principal.memberId, JSON.stringify(report), at.toISOString(), body.disconnect !== null && body.disconnect.harness === null],
        );
        if (body.disconnect !== null) {
          await tx.query('INSERT INTO device_disconnects (workspace_id, device_id, harness, reason, member_id, at) VALUES ($1, $2, $3, $4, $5, $6)', [
            principal.workspaceId,
            row!.id,
            body.disconnect.harness,
            body.disconnect.reason,
            principal.memberId,
            at.toISOString(),
          ]);
        }
        await ungovernedEvents(tx, at, principal.workspaceId, row!.id, report);
        return row!.id;
      });
      services.deliveries.wake();
      return { body: { id, receivedAt: at.toISOString() } };
    },
  }),
  route.authed('OA', {
    method: 'GET',
    path: '/devices',
    summary: "The workspace's machines",
    handler: async ({ services, principal }) => ({ body: { devices: (await visibleDevices(services.db, principal)).map((r) => deviceView(r, services.clock())) } }),
  }),
  route.authed('OA', {
    method: 'GET',
    path: '/devices/:id',
    summary: 'One machine with its latest report',
    handler: async ({ services, principal, params }) => {
      const [row] = await visibleDevices(services.db, principal, params.id);
      if (row === undefined) throw new NotFoundError(`Device '${params.id}' not found.`);
      const now = services.clock();
      return { body: { ...deviceView(row, now), harnesses: harnessRows(row, now), mcpServers: mcpRows(row), skills: row.report.skills, configCapture: row.report.configCapture ?? null } };
    },
  }),
  route.authed('OA', {
    method: 'DELETE',
    path: '/devices/:id',
    summary: 'Retire a machine (soft): it leaves the inventory until it reports again',
    handler: async ({ services, principal, params }) => {
      const rows = await services.db.query('UPDATE devices SET retired_at = $3 WHERE workspace_id = $1 AND id = $2 AND retired_at IS NULL RETURNING id', [
        principal.workspaceId,
        params.id,
        new Date(services.clock()).toISOString(),
      ]);
      if (rows.length === 0) throw new NotFoundError(`Device '${params.id}' not found.`);
      return { body: { retired: true, id: params.id } };
    },
  }),
  route.authed('OAED', {
    method: 'GET',
    path: '/inventory/summary',
    summary: 'Machine, harness, MCP server and skill counts and the governed percentage',
    handler: async ({ services, principal }) => {
      const now = services.clock();
      const rows = await visibleDevices(services.db, principal);
      const harnesses = rows.flatMap((r) => harnessRows(r, now));
      const servers = rows.flatMap(mcpRows);
      const governed = harnesses.filter((h) => h.status === 'Governed').length + servers.filter((s) => s.status === 'Governed').length;
      const total = harnesses.length + servers.length;
      return {
        body: {
          machines: rows.length,
          reporting: rows.filter((r) => deviceView(r, now).state === 'Reporting').length,
          harnesses: harnesses.length,
          mcpServers: servers.length,
          skills: rows.reduce((n, r) => n + r.report.skills.length, 0),
          governedPct: total === 0 ? 100 : Math.round((governed / total) * 1000) / 10,
          byStatus: Object.fromEntries(['Governed', 'Unverified', 'Gate stale', 'Ungoverned'].map((s) => [s, harnesses.filter((h) => h.status === s).length])),
        },
      };
    },
  }),
  route.authed('OAED', {
    method: 'GET',
    path: '/inventory/devices',
    summary: 'One row per machine',
    handler: async ({ services, principal }) => ({ body: { devices: (await visibleDevices(services.db, principal)).map((r) => deviceView(r, services.clock())) } }),
  }),
  route.authed<undefined, Filters>('OAED', {
    method: 'GET',
    path: '/inventory/harnesses',
    summary: 'Harnesses by machine with their status; filters status, harness, device, q; format=csv',
    query: filters,
    handler: async ({ services, principal, query }) => {
      const now = services.clock();
      const rows = (await visibleDevices(services.db, principal, query.device))
        .flatMap((r) => harnessRows(r, now))
        .filter((h) => (query.status === undefined || h.status === query.status) && (query.harness === undefined || h.type === query.harness) && matchesQ(query.q, h.type, h.hostname, h.gateFile));
      return listReply(rows, query.format, ['deviceId', 'hostname', 'type', 'version', 'status', 'reason', 'gateKind', 'gateFile', 'gateFileOnDisk', 'lastGateEventAt', 'lastGuardsDisabledAt'], 'harnesses');
    },
  }),
  route.authed<undefined, Filters>('OAED', {
    method: 'GET',
    path: '/inventory/mcp-servers',
    summary: 'MCP servers by machine, Governed when the MCP governance proxy fronts them; filters status, harness, device, q; format=csv',
    query: filters,
    handler: async ({ services, principal, query }) => {
      const rows = (await visibleDevices(services.db, principal, query.device))
        .flatMap(mcpRows)
        .filter((s) => (query.status === undefined || s.status === query.status) && (query.harness === undefined || s.harness === query.harness) && matchesQ(query.q, s.name, s.hostname, s.url));
      return listReply(rows, query.format, ['deviceId', 'hostname', 'harness', 'name', 'transport', 'status', 'fronted', 'notFrontedReason', 'url'], 'mcpServers');
    },
  }),
  route.authed<undefined, Pick<Filters, 'device' | 'q'>>('OAED', {
    method: 'GET',
    path: '/inventory/skills',
    summary: 'Skill bundles by machine; filters device, q',
    query: filters.pick({ device: true, q: true }),
    handler: async ({ services, principal, query }) => ({
      body: {
        skills: (await visibleDevices(services.db, principal, query.device))
          .flatMap((r) => r.report.skills.map((s) => ({ deviceId: r.id, hostname: r.report.machine.hostname, ...s })))
          .filter((s) => matchesQ(query.q, s.name, s.folder, s.hostname)),
      },
    }),
  }),
  route.authed<undefined, { limit: number }>('OAED', {
    method: 'GET',
    path: '/inventory/disconnects',
    summary: 'Reported disconnects, newest first',
    query: z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
    handler: async ({ services, principal, query }) => {
      const { all } = visibility(principal);
      const rows = await services.db.query<{ device_id: string; harness: string | null; reason: string | null; member_id: string | null; at: Date }>(
        `SELECT d.device_id, d.harness, d.reason, d.member_id, d.at FROM device_disconnects d JOIN devices v ON v.id = d.device_id
         WHERE d.workspace_id = $1 AND ($2::boolean OR v.member_id = $3) ORDER BY d.at DESC, d.id DESC LIMIT $4`,
        [principal.workspaceId, all, principal.memberId, query.limit],
      );
      return { body: { disconnects: rows.map((r) => ({ deviceId: r.device_id, harness: r.harness, reason: r.reason, memberId: r.member_id, at: r.at.toISOString() })) } };
    },
  }),
];
