import { z } from 'zod';
import { isoDateTime } from '../../lib/storable.js';
import { evaluateHookGate, hookGateBody, invalidHookGateRequest, type HookGateBody } from '../hook-gate/gate.js';
import { newId } from '../ids.js';
import { recordIncident } from '../incidents/store.js';
import { route, type Route } from '../router.js';

/** Seed 002's hook event types, with the snapshot-health events a gate reports once per process. */
export const HOOK_EVENT_TYPES = [
  'tool_blocked',
  'tool_held',
  'hold_approved_bypass_used',
  'tool_flagged',
  'tool_would_block',
  'tool_allowed',
  'snapshot_health',
  'snapshot_format_newer',
  'guards_disabled',
  'tool_reverted',
  'plan_loaded',
  'gate_decision',
  'tool_call',
  /** The sync daemon found a managed harness file with its gate taken out (bypassEnforcementTier): an incident. */
  'gate_tampered',
] as const;

const optional = (max: number) => z.string().min(1).max(max).nullish();

/** One gate event; fields beyond these are kept as its detail. `eventId` makes a report idempotent. */
const hookEvent = z.looseObject({
  eventId: z.string().min(1).max(128),
  type: z.enum(HOOK_EVENT_TYPES),
  at: isoDateTime().optional(),
  gateSource: optional(64),
  harness: optional(64),
  sessionId: optional(256),
  toolName: optional(256),
  code: optional(64),
  rule: optional(256),
  reason: z.string().max(2000).nullish(),
  holdId: optional(64),
  incidentId: optional(64),
  traceId: optional(128),
});
type HookEvent = z.infer<typeof hookEvent>;

const eventsBody = z.union([z.strictObject({ events: z.array(hookEvent).min(1).max(500) }), hookEvent]);
type EventsBody = z.infer<typeof eventsBody>;

const KNOWN = new Set(['eventId', 'type', 'at', 'gateSource', 'harness', 'sessionId', 'toolName', 'code', 'rule', 'reason', 'holdId', 'incidentId', 'traceId']);

export const hookGateRoutes: Route[] = [
  route.authed<HookGateBody>('A', {
    method: 'POST',
    path: '/hook-gate',
    statuses: [200, 400, 401, 503],
    summary:
      'The verdict on a tool call before a harness runs it: DLP over the arguments, the MCP lists, the workspace\'s WASM and decide rules, holds. 400 INVALID_REQUEST (refusal HOOK_GATE) for an unreadable request; 503 GOVERNANCE_UNAVAILABLE when a check could not complete',
    body: hookGateBody,
    invalidBody: (message, details) => invalidHookGateRequest(message, details),
    handler: async ({ services, principal, body }) => {
      const reply = await evaluateHookGate(services, principal, body);
      services.deliveries.wake();
      return reply;
    },
  }),
  route.authed<EventsBody>('A', {
    method: 'POST',
    gateway: true,
    path: '/hook-events',
    summary: 'Gates report their decisions (one event or `{ events }`, up to 500); an event id already recorded is skipped. A tool_blocked or tool_held event without an incident opens or joins one',
    body: eventsBody,
    handler: async ({ services, principal, body }) => {
      const events: HookEvent[] = 'events' in body && Array.isArray(body.events) ? body.events : [body as HookEvent];
      const now = new Date(services.clock());
      const result = await services.db.transaction(async (tx) => {
        let accepted = 0;
        const incidents: Array<{ eventId: string; incidentId: string }> = [];
        for (const e of events) {
          const detail = Object.fromEntries(Object.entries(e).filter(([k]) => !KNOWN.has(k)));
          const inserted = await tx.query(
            `INSERT INTO hook_events (id, workspace_id, event_id, type, at, member_id, gate_source, harness, session_id, tool, code, rule, hold_id, incident_id, trace_id, detail, received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (workspace_id, event_id) DO NOTHING RETURNING id`,
            [
              newId.hookEvent(),
              principal.workspaceId,
              e.eventId,
              e.type,
              e.at ?? now.toISOString(),
              principal.memberId,
              e.gateSource ?? null,
              e.harness ?? null,
              e.sessionId ?? null,
              e.toolName ?? null,
              e.code ?? null,
              e.rule ?? null,
              e.holdId ?? null,
              e.incidentId ?? null,
              e.traceId ?? null,
              JSON.stringify({ ...detail, ...(e.reason ? { reason: e.reason } : {}) }),
              now.toISOString(),
            ],
          );
          if (inserted.length === 0) continue;
          accepted++;
          if ((e.type === 'tool_blocked' || e.type === 'tool_held' || e.type === 'gate_tampered') && !e.incidentId && !e.holdId) {
            const incident = await recordIncident(tx, now, {
              workspaceId: principal.workspaceId,
              sessionId: e.sessionId ?? null,
              rule: e.rule ?? e.code ?? 'unknown',
              kind: e.type === 'tool_held' ? 'hold' : 'block',
              tool: e.toolName ?? null,
              harness: e.harness ?? null,
              code: e.code ?? null,
              reason: e.reason ?? null,
              ref: { eventId: e.eventId, ...(e.toolName ? { tool: e.toolName } : {}), ...(e.traceId ? { traceId: e.traceId } : {}) },
            });
            incidents.push({ eventId: e.eventId, incidentId: incident.id });
          }
        }
        return { accepted, duplicates: events.length - accepted, incidents };
      });
      services.deliveries.wake();
      return { body: result };
    },
  }),
];
