import { z } from 'zod';
import { isoDateTime } from '../../lib/storable.js';
import { ForbiddenError } from '../errors.js';
import {
  approvedBypasses,
  getHold,
  HOLD_ORIGINS,
  HOLD_STATES,
  holdAnalysis,
  listHolds,
  recordHold,
  recordSubstitution,
  reviewHold,
  type HoldFilter,
} from '../holds/store.js';
import { route, type Route } from '../router.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex');
const optionalText = (max: number) => z.string().min(1).max(max).nullish();

/** POST /decisions: a hold as a gateway, a gate or a daemon records it. */
const holdBody = z
  .strictObject({
    tool: z.string().min(1).max(256),
    rule: z.string().min(1).max(256),
    source: z.string().min(1).max(64).optional(),
    reason: z.string().max(2000).optional(),
    /** The call's arguments (a JSON value, or the raw text of a tool that takes text); stored redacted. */
    arguments: z.unknown(),
    argumentsSha256: sha256Hex.optional(),
    sessionId: optionalText(256),
    harness: optionalText(64),
    traceId: optionalText(128),
    gatewayId: optionalText(128),
    model: optionalText(256),
    origin: z.enum(HOLD_ORIGINS).default('gate'),
    /** SHA-256 of the vk_ key the agent called a gateway with: the hold's requester is that key's member (OWNER or ADMIN callers only). */
    requesterKeySha256: sha256Hex.optional(),
  })
  .refine((b) => b.arguments !== undefined, { message: 'arguments is required', path: ['arguments'] });
type HoldBody = z.infer<typeof holdBody>;

const listQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  state: z.enum(HOLD_STATES).optional(),
  tool: z.string().min(1).max(256).optional(),
  rule: z.string().min(1).max(256).optional(),
  session_id: z.string().min(1).max(256).optional(),
});

const bypassQuery = z.strictObject({ rule: z.string().min(1).max(256).optional(), tool: z.string().min(1).max(256).optional(), argumentsSha256: sha256Hex.optional() });
const analysisQuery = z.strictObject({ from: isoDateTime().optional(), to: isoDateTime().optional() });

const reviewBody = z.strictObject({ decision: z.enum(['approve', 'reject']), reason: z.string().min(1).max(1000).optional() });

const substitutionsBody = z.strictObject({
  gatewayId: optionalText(128),
  traceId: z.string().min(1).max(128),
  sessionId: optionalText(256),
  harness: optionalText(64),
  model: optionalText(256),
  substitutions: z
    .array(
      z.strictObject({
        callId: z.string().min(1).max(256),
        tool: z.string().min(1).max(256),
        action: z.enum(['block', 'hold']),
        rule: z.string().min(1).max(256),
        source: optionalText(64),
        code: optionalText(64),
        reason: z.string().max(2000).nullish(),
        holdId: optionalText(64),
      }),
    )
    .min(1)
    .max(100),
});
type SubstitutionsBody = z.infer<typeof substitutionsBody>;

export const decisionRoutes: Route[] = [
  route.authed<undefined, HoldFilter>('A', {
    method: 'GET',
    path: '/decisions',
    summary: "The workspace's holds, newest first, with their review; filtered by state, tool, rule or session",
    query: listQuery,
    handler: async ({ services, principal, query }) => ({ body: await listHolds(services.db, new Date(services.clock()), principal.workspaceId, query) }),
  }),
  route.authed<HoldBody>('A', {
    gateway: true,
    method: 'POST',
    path: '/decisions',
    statuses: [200, 201, 400, 401, 403],
    summary: 'Record a hold (a tool call a hold rule stopped): 201 when new, 200 when the same call of the same requester is already pending',
    body: holdBody,
    handler: async ({ services, principal, body }) => {
      let requester = principal.memberId;
      if (body.requesterKeySha256 !== undefined) {
        if (principal.role !== 'OWNER' && principal.role !== 'ADMIN') throw new ForbiddenError('Only an OWNER\'s or ADMIN\'s key (a gateway) may name the requester of a hold.');
        const [key] = await services.db.query<{ member_id: string }>('SELECT member_id FROM api_keys WHERE workspace_id = $1 AND key_hash = $2 AND revoked_at IS NULL', [
          principal.workspaceId,
          body.requesterKeySha256,
        ]);
        if (key !== undefined) requester = key.member_id;
      }
      const now = new Date(services.clock());
      const { hold, created } = await services.db.transaction((tx) =>
        recordHold(tx, now, { workspaceId: principal.workspaceId, requesterMemberId: requester, reporterMemberId: principal.memberId }, body),
      );
      services.deliveries.wake();
      return { status: created ? 201 : 200, body: { ...hold, created } };
    },
  }),
  route.authed<undefined, z.infer<typeof analysisQuery>>('A', {
    method: 'GET',
    path: '/decisions/analysis',
    summary: 'Holds counted by rule, tool and outcome, the median time to review, and the tool calls gateways rewrote',
    query: analysisQuery,
    handler: async ({ services, principal, query }) => ({ body: await holdAnalysis(services.db, principal.workspaceId, query) }),
  }),
  route.authed<undefined, z.infer<typeof bypassQuery>>('A', {
    method: 'GET',
    gateway: true,
    path: '/decisions/approved-bypasses',
    summary: 'Unexpired approvals that let an exact call (rule, tool, SHA-256 of the arguments as canonical JSON) through now',
    query: bypassQuery,
    handler: async ({ services, principal, query }) => ({ body: await approvedBypasses(services.db, new Date(services.clock()), principal.workspaceId, query) }),
  }),
  route.authed<SubstitutionsBody>('A', {
    method: 'POST',
    gateway: true,
    path: '/decisions/substitutions',
    summary: 'A gateway reports the tool calls it rewrote (blocked or held); answers the incident each opened or joined',
    body: substitutionsBody,
    handler: async ({ services, principal, body }) => {
      const now = new Date(services.clock());
      const incidents = await services.db.transaction(async (tx) => {
        const out: Array<{ callId: string; incidentId: string | null }> = [];
        for (const s of body.substitutions) {
          const incidentId = await recordSubstitution(tx, now, principal.workspaceId, {
            ...s,
            traceId: body.traceId,
            sessionId: body.sessionId,
            harness: body.harness,
            gatewayId: body.gatewayId,
            model: body.model,
          });
          out.push({ callId: s.callId, incidentId });
        }
        return out;
      });
      services.deliveries.wake();
      return { body: { accepted: incidents.length, substitutions: incidents } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/decisions/:entryId',
    summary: 'One hold with its review',
    handler: async ({ services, principal, params }) => ({ body: await getHold(services.db, new Date(services.clock()), principal.workspaceId, params.entryId!) }),
  }),
  route.authed<z.infer<typeof reviewBody>>('OAE', {
    method: 'POST',
    path: '/decisions/:entryId/review',
    statuses: [200, 400, 401, 403, 404, 409],
    summary: "Approve or reject a pending hold (OWNER, ADMIN or EM; never the hold's own requester); 409 HOLD_ALREADY_REVIEWED",
    body: reviewBody,
    handler: async ({ services, principal, params, body }) => {
      const now = new Date(services.clock());
      const hold = await services.db.transaction((tx) => reviewHold(tx, now, principal, params.entryId!, { decision: body.decision, reason: body.reason ?? null }));
      return { body: hold };
    },
  }),
];

