import { z } from 'zod';
import { isoDateTime } from '../../lib/storable.js';
import { workspaceSettingsSchema, type WorkspaceSettings } from '../../config/settings.js';
import { ForbiddenError } from '../errors.js';
import { planOf } from '../plans.js';
import { route, type AuthedContext, type Route } from '../router.js';
import { COST_POSTURES, POSTURE_LABEL_KEYS, SECURITY_POSTURES } from '../settings/postures.js';
import { loadSettings, saveSettings, settingsReadForm } from '../settings/store.js';
import { applySettingsWrite, labelPosture, settingsWriteBody } from '../settings/write.js';

const postureBody = z
  .strictObject({ security: z.enum(['strict', 'balanced']).optional(), cost: z.enum(['economy', 'balanced']).optional() })
  .refine((b) => b.security !== undefined || b.cost !== undefined, { message: 'name a security posture, a cost posture or both' });

/** What the audit timeline lists: settings and config changes, hold reviews, incident resolutions, notification rule and SIEM destination changes. */
const TIMELINE_KINDS = [
  'settings.changed',
  'config.changed',
  'decision.reviewed',
  'incident.resolved',
  'notification_rule.changed',
  'siem_destination.changed',
  'mcp.tool_change',
  'member.deactivated',
  'member.reactivated',
  'member.role_changed',
  'gateway.registered',
  'gateway.config_changed',
  'gateway.token_rotated',
  'gateway.token_self_rotated',
  'gateway.revoked',
  'workspace.gateway_assigned',
  'org.created',
  'org.gateway_assigned',
  'team.created',
  'workspace.created',
] as const;

const timelineQuery = z.strictObject({
  from: isoDateTime().optional(),
  to: isoDateTime().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

/** One settings write: validated, stored, audited, version bumped and announced; answers the read form. */
async function writeSettings(ctx: AuthedContext<unknown, unknown>, update: WorkspaceSettings, labels: Partial<Record<'security' | 'cost', string>> = {}) {
  const { services, principal } = ctx;
  const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
    const before = await loadSettings(tx, services.secrets, principal.workspaceId, true);
    if (update.sso_group_policy != null && !planOf(before.plan).singleSignOn) {
      throw new ForbiddenError(`sso_group_policy needs a plan with single sign-on; this workspace is on ${before.plan}.`);
    }
    const after = applySettingsWrite(before, update, new Date());
    for (const [kind, label] of Object.entries(labels) as Array<['security' | 'cost', string]>) after.settings = labelPosture(after.settings, kind, label);
    await saveSettings(tx, services.secrets, principal.workspaceId, principal.memberId, before, after);
    return settingsReadForm(after);
  });
  return result;
}

export const settingsRoutes: Route[] = [
  route.authed('A', {
    method: 'GET',
    path: '/workspace/settings',
    summary: "The workspace's settings: stored values with defaults filled in, byocStorage secrets redacted",
    handler: async ({ services, principal }) => {
      const state = await loadSettings(services.db, services.secrets, principal.workspaceId);
      return { body: { workspaceId: principal.workspaceId, settings: settingsReadForm(state) } };
    },
  }),
  route.authed<WorkspaceSettings>('OA', {
    method: 'PUT',
    path: '/workspace/settings',
    summary: 'Write one or more settings keys (seed 001 write rules); answers the full settings after the change',
    body: settingsWriteBody,
    documentedBody: workspaceSettingsSchema,
    handler: async (ctx) => ({ body: { updated: true, workspaceId: ctx.principal.workspaceId, settings: await writeSettings(ctx, ctx.body) } }),
  }),
  route.authed('A', {
    method: 'GET',
    path: '/workspace/posture',
    summary: 'The security and cost postures last applied and still in force',
    handler: async ({ services, principal }) => {
      const { settings } = await loadSettings(services.db, services.secrets, principal.workspaceId);
      return { body: { security: settings[POSTURE_LABEL_KEYS.security] ?? null, cost: settings[POSTURE_LABEL_KEYS.cost] ?? null } };
    },
  }),
  route.authed<z.infer<typeof postureBody>>('OA', {
    method: 'POST',
    path: '/workspace/posture',
    summary: "Apply a security and/or cost posture: its settings are written and its label recorded",
    body: postureBody,
    handler: async (ctx) => {
      const { security, cost } = ctx.body;
      const sec = security === undefined ? {} : SECURITY_POSTURES[security];
      const cst = cost === undefined ? {} : COST_POSTURES[cost];
      const update: WorkspaceSettings = { ...sec, ...cst, featureFlags: { ...sec.featureFlags, ...cst.featureFlags } };
      const settings = await writeSettings(ctx, update, { ...(security ? { security } : {}), ...(cost ? { cost } : {}) });
      return { body: { applied: true, workspaceId: ctx.principal.workspaceId, settings } };
    },
  }),
  route.authed<undefined, z.infer<typeof timelineQuery>>('OA', {
    method: 'GET',
    path: '/audit/timeline',
    summary:
      'The audit timeline over a date range, newest first: the settings history with policy, WASM rule and MCP registry changes, and every event (hold reviews, incident resolutions, notification rule and SIEM destination changes, MCP tool-set changes too)',
    query: timelineQuery,
    handler: async ({ services, principal, query }) => {
      const range = `workspace_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at <= $3)`;
      const settingsOnly = `${range} AND kind IN ('settings.changed', 'config.changed')`;
      const every = `${range} AND kind IN (${TIMELINE_KINDS.map((k) => `'${k}'`).join(', ')})`;
      const params = [principal.workspaceId, query.from ?? null, query.to ?? null];
      type Row = { id: number; kind: string; member_id: string | null; detail: Record<string, unknown>; created_at: Date };
      const page = (where: string) =>
        services.db.query<Row>(`SELECT id::int AS id, kind, member_id, detail, created_at FROM audit_events WHERE ${where} ORDER BY id DESC LIMIT $4 OFFSET $5`, [
          ...params,
          query.limit,
          query.offset,
        ]);
      const total = async (where: string) => (await services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE ${where}`, params))[0]!.n;
      const [settingsRows, settingsTotal, eventRows, eventsTotal] = await Promise.all([page(settingsOnly), total(settingsOnly), page(every), total(every)]);
      return {
        body: {
          settingsHistory: settingsRows.map((r) => ({ id: r.id, at: r.created_at.toISOString(), actorMemberId: r.member_id, ...r.detail })),
          total: settingsTotal,
          events: eventRows.map((r) => ({ id: r.id, at: r.created_at.toISOString(), kind: r.kind, actorMemberId: r.member_id, ...r.detail })),
          eventsTotal,
          limit: query.limit,
          offset: query.offset,
        },
      };
    },
  }),
];
