import { z } from 'zod';
import { recordAudit } from '../audit.js';
import { recordKill, refusalParts } from '../incidents/from-traces.js';
import { getIncident, listIncidents, resolveIncident, type IncidentFilter } from '../incidents/store.js';
import { route, type Route } from '../router.js';

const listQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  state: z.enum(['open', 'resolved']).optional(),
  session_id: z.string().min(1).max(256).optional(),
  rule: z.string().min(1).max(256).optional(),
  trace_id: z.string().min(1).max(128).optional(),
});

const killBody = z.strictObject({
  gatewayId: z.string().min(1).max(64).optional(),
  /** The refused request's trace record as it stands when the gateway answers. */
  trace: refusalParts.refine((t) => t.enforcement === 'KILL', { message: 'only a KILL is recorded here' }),
});

const resolveBody = z.strictObject({ resolution: z.string().min(1).max(2000).optional() }).optional();

export const incidentRoutes: Route[] = [
  route.authed<undefined, IncidentFilter>('OAE', {
    method: 'GET',
    path: '/incidents',
    summary: 'Incidents (every KILL, block and hold, grouped by session and rule), most recent activity first; filtered by state, session, rule or trace',
    query: listQuery,
    handler: async ({ services, principal, query }) => ({ body: await listIncidents(services.db, principal.workspaceId, query) }),
  }),
  route.authed('OAE', {
    method: 'GET',
    path: '/incidents/:id',
    summary: 'One incident with the refusals it counts (the newest 50)',
    handler: async ({ services, principal, params }) => ({ body: await getIncident(services.db, principal.workspaceId, params.id!) }),
  }),
  route.authed<z.infer<typeof killBody>>('A', {
    method: 'POST',
    gateway: true,
    path: '/incidents/kills',
    statuses: [200, 400, 401, 403],
    summary: 'A gateway records a request it refused (KILL) before answering, so the refusal can name its incident; the trace shipped later does not count it again',
    body: killBody,
    handler: async ({ services, principal, body }) => {
      const now = new Date(services.clock());
      const incidentId = await services.db.transaction((tx) => recordKill(tx, now, principal.workspaceId, body.trace));
      services.deliveries.wake();
      return { body: { incidentId } };
    },
  }),
  route.authed<z.infer<typeof resolveBody>>('OAE', {
    method: 'POST',
    path: '/incidents/:id/resolve',
    statuses: [200, 400, 401, 403, 404, 409],
    summary: 'Resolve an open incident, with an optional resolution note; the next refusal of its group opens a new one. 409 INCIDENT_ALREADY_RESOLVED',
    body: resolveBody,
    handler: async ({ services, principal, params, body }) => {
      const now = new Date(services.clock());
      const incident = await services.db.transaction(async (tx) => {
        const resolved = await resolveIncident(tx, now, principal, params.id!, body?.resolution ?? null);
        await recordAudit(tx, {
          workspaceId: principal.workspaceId,
          memberId: principal.memberId,
          kind: 'incident.resolved',
          at: now,
          detail: { incidentId: resolved.id, rule: resolved.rule, sessionId: resolved.sessionId, occurrences: resolved.occurrences, resolution: resolved.resolution },
        });
        return resolved;
      });
      return { body: incident };
    },
  }),
];
