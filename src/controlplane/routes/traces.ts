import { z } from 'zod';
import { isoDateTime } from '../../lib/storable.js';
import { syncBackBodySchema, type SyncBackBody } from '../../traces/ship-batch.js';
import { NotFoundError } from '../errors.js';
import { incidentsFromTrace } from '../incidents/from-traces.js';
import { route, type Route } from '../router.js';

const ENFORCEMENTS = ['BYPASS', 'ENHANCE', 'HIJACK', 'KILL'] as const;

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  since: isoDateTime().optional(),
  enforcement: z.enum(ENFORCEMENTS).optional(),
  model: z.string().min(1).max(256).optional(),
});

type StoredTrace = { record: Record<string, unknown>; token_utility: string; gateway_id: string | null };
const traceOut = (r: StoredTrace) => ({ ...r.record, token_utility: r.token_utility, gatewayId: r.gateway_id });

export const traceRoutes: Route[] = [
  route.authed<SyncBackBody>('A', {
    method: 'POST',
    gateway: true,
    path: '/traces/sync-back',
    summary: "A gateway ships a batch of trace records; a record already stored (same id) is skipped, so replays are safe",
    body: syncBackBodySchema,
    handler: async ({ services, principal, body }) => {
      const now = new Date(services.clock());
      const stored = await services.db.transaction(async (tx) => {
        let inserted = 0;
        for (const t of body.traces) {
          const rows = await tx.query(
            `INSERT INTO traces (id, workspace_id, gateway_id, time, session_id, model, enforcement, input_tokens, output_tokens, cost_usd, record)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (workspace_id, id) DO NOTHING RETURNING id`,
            [t.id, principal.workspaceId, body.gatewayId ?? null, t.time, t.session, t.model, t.enforcement, t.inputTokens, t.outputTokens, t.costUsd, JSON.stringify({ ...t, workspace: principal.workspaceId })],
          );
          inserted += rows.length;
          if (rows.length > 0 && (t.enforcement !== 'BYPASS' || (t as { error?: unknown }).error === 'OVERAGE_HARD_CAP_EXCEEDED')) {
            await incidentsFromTrace(tx, now, principal.workspaceId, body.gatewayId ?? null, t);
          }
        }
        return inserted;
      });
      services.deliveries.wake();
      return { body: { accepted: stored, duplicates: body.traces.length - stored } };
    },
  }),
  route.authed<undefined, z.infer<typeof listQuery>>('A', {
    method: 'GET',
    path: '/traces',
    summary: "The workspace's traces, newest first",
    query: listQuery,
    handler: async ({ services, principal, query }) => {
      const where = `workspace_id = $1 AND ($2::timestamptz IS NULL OR time > $2) AND ($3::text IS NULL OR enforcement = $3) AND ($4::text IS NULL OR model = $4)`;
      const params = [principal.workspaceId, query.since ?? null, query.enforcement ?? null, query.model ?? null];
      const [count] = await services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM traces WHERE ${where}`, params);
      const rows = await services.db.query<StoredTrace>(`SELECT record, token_utility, gateway_id FROM traces WHERE ${where} ORDER BY time DESC, id DESC LIMIT $5 OFFSET $6`, [
        ...params,
        query.limit,
        query.offset,
      ]);
      return { body: { traces: rows.map(traceOut), total: count!.n, limit: query.limit, offset: query.offset } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/traces/:id',
    summary: 'One full trace',
    handler: async ({ services, principal, params }) => {
      const [row] = await services.db.query<StoredTrace>('SELECT record, token_utility, gateway_id FROM traces WHERE id = $1 AND workspace_id = $2', [params.id, principal.workspaceId]);
      if (row === undefined) throw new NotFoundError(`Trace '${params.id}' not found.`);
      return { body: traceOut(row) };
    },
  }),
];
