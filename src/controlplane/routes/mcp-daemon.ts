import { z } from 'zod';
import { route, type Route } from '../router.js';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** One status snapshot of a machine's MCP daemon. */
const reportBody = z.strictObject({
  /** The daemon's own id (one per machine); a workspace may run many. */
  daemonId: z.string().min(1).max(128).default('default'),
  version: z.string().max(64).optional(),
  startedAt: z.iso.datetime(),
  /** How often the daemon reports; silence for three intervals reads as not running. */
  intervalMs: z.number().int().min(1000).max(3_600_000),
  counters: z.strictObject({ lookups: count, allowed: count, refused: count, errors: count }),
  servers: z.array(z.strictObject({ name: z.string().min(1).max(256), sessions: count, calls: count, refused: count })).max(500).default([]),
});
type Report = z.infer<typeof reportBody>;

const MISSED_REPORTS = 3;

export const mcpDaemonRoutes: Route[] = [
  route.authed('A', {
    method: 'POST',
    path: '/mcp-daemon/policy-invalidate',
    summary: "Bump the workspace's config version so every gateway and daemon re-pulls policy",
    handler: async ({ services, principal }) => {
      const { version } = await services.changeConfig(principal.workspaceId, async () => undefined);
      return { body: { invalidated: true, version } };
    },
  }),
  route.authed<Report>('A', {
    method: 'POST',
    path: '/mcp-daemon/report',
    summary: "An MCP daemon's status snapshot (the latest one per daemon is kept)",
    body: reportBody,
    handler: async ({ services, principal, body }) => {
      const at = new Date(services.clock()).toISOString();
      await services.db.query(
        `INSERT INTO mcp_daemon_reports (workspace_id, daemon_id, report, received_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace_id, daemon_id) DO UPDATE SET report = $3, received_at = $4`,
        [principal.workspaceId, body.daemonId, JSON.stringify(body), at],
      );
      return { body: { accepted: true, receivedAt: at } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/mcp-daemon/status',
    summary: "The workspace's MCP daemons: running while each reports within three of its intervals; no report reads as not running with empty counters",
    handler: async ({ services, principal }) => {
      const now = services.clock();
      const rows = await services.db.query<{ daemon_id: string; report: Report; received_at: Date }>(
        'SELECT daemon_id, report, received_at FROM mcp_daemon_reports WHERE workspace_id = $1 ORDER BY received_at DESC',
        [principal.workspaceId],
      );
      const daemons = rows.map((r) => ({
        daemonId: r.daemon_id,
        running: now - r.received_at.getTime() <= MISSED_REPORTS * r.report.intervalMs,
        lastReportAt: r.received_at.toISOString(),
        startedAt: r.report.startedAt,
        version: r.report.version ?? null,
        intervalMs: r.report.intervalMs,
        counters: r.report.counters,
        servers: r.report.servers,
      }));
      const live = daemons.filter((d) => d.running);
      const counters = { lookups: 0, allowed: 0, refused: 0, errors: 0 };
      for (const d of live) for (const k of Object.keys(counters) as Array<keyof typeof counters>) counters[k] += d.counters[k];
      return { body: { running: live.length > 0, lastReportAt: daemons[0]?.lastReportAt ?? null, counters, daemons } };
    },
  }),
];
