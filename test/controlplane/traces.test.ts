import t from 'tap';
import { traceId } from '../../src/lib/ids.js';
import { api, signUp, startTestControlPlane, type Account } from '../helpers/controlplane.js';
import { traceRecord } from '../helpers/traces.js';

const cp = await startTestControlPlane(t);

interface Shipped {
  id: string;
  time: string;
  model: string | null;
  enforcement: string;
  [k: string]: unknown;
}

function trace(over: Partial<Shipped> & { at: number }): Shipped {
  const { at, ...rest } = over;
  const base = traceRecord({
    id: traceId(at),
    time: new Date(at).toISOString(),
    workspace: 'ignored',
    session: 'sess-1',
    model: 'gpt-4o-mini',
    latencyMs: 12,
    ttfbMs: 5,
    inputTokens: 100,
    outputTokens: 50,
    costUsd: 0.01,
  });
  return { ...base, ...rest };
}

async function ship(owner: Account, traces: Shipped[]) {
  return api(cp, 'POST', '/traces/sync-back', { token: owner.apiKey, body: { gatewayId: 'gw_1', traces } });
}

const now = Date.now();
const BATCH = [
  trace({ at: now - 5000 }),
  trace({ at: now - 4000, model: 'gpt-4o', enforcement: 'ENHANCE', costUsd: 0.5, inputTokens: 1000, outputTokens: 10 }),
  trace({ at: now - 3000, enforcement: 'KILL', status: 403, inputTokens: null, outputTokens: null, costUsd: null, session: 'sess-2' }),
  trace({ at: now - 2000, model: 'gpt-4o', enforcement: 'HIJACK', costUsd: 0.25 }),
  trace({ at: now - 1000 }),
];

t.test('sync-back stores a batch once; a replay of the same records is skipped', async (t) => {
  const owner = await signUp(cp);
  t.same((await ship(owner, BATCH)).body, { accepted: 5, duplicates: 0 });
  t.same((await ship(owner, BATCH.slice(3))).body, { accepted: 0, duplicates: 2 });
  t.equal((await ship(owner, [])).status, 400, 'at least one record');
  t.equal((await ship(owner, [{ ...BATCH[0]!, enforcement: 'MAYBE' }])).status, 400);
  t.equal((await ship(owner, [{ ...BATCH[0]!, id: 'not-a-trace' }])).status, 400);
  t.equal((await ship(owner, Array.from({ length: 1001 }, (_, i) => trace({ at: now - i })))).status, 400, 'at most 1,000 per batch');
  const other = await signUp(cp);
  t.equal((await api(cp, 'GET', '/traces', { token: other.apiKey })).body.total, 0, 'traces belong to the shipping key’s workspace');
});

t.test('GET /traces: envelope, newest first, limit/offset bounds and the since, enforcement and model filters; GET /traces/:id', async (t) => {
  const owner = await signUp(cp);
  await ship(owner, BATCH);
  const all = await api(cp, 'GET', '/traces', { token: owner.accessToken });
  t.match(all.body, { total: 5, limit: 20, offset: 0 });
  t.same(all.body.traces.map((tr: Shipped) => tr.id), BATCH.map((b) => b.id).reverse());
  t.match(all.body.traces[0], { workspace: owner.workspaceId, token_utility: 'USEFUL', gatewayId: 'gw_1', findings: [] });
  const page = await api(cp, 'GET', '/traces?limit=2&offset=1', { token: owner.accessToken });
  t.same(page.body.traces.map((tr: Shipped) => tr.id), [BATCH[3]!.id, BATCH[2]!.id]);
  t.match(page.body, { total: 5, limit: 2, offset: 1 });
  t.equal((await api(cp, 'GET', '/traces?limit=100', { token: owner.accessToken })).status, 200);
  for (const q of ['limit=0', 'limit=101', 'offset=-1', 'enforcement=MAYBE', 'since=yesterday', 'colour=red']) {
    t.equal((await api(cp, 'GET', `/traces?${q}`, { token: owner.accessToken })).status, 400, q);
  }
  t.equal((await api(cp, 'GET', `/traces?since=${encodeURIComponent(BATCH[2]!.time)}`, { token: owner.accessToken })).body.total, 2, 'since: strictly after');
  t.equal((await api(cp, 'GET', '/traces?enforcement=KILL', { token: owner.accessToken })).body.traces[0].id, BATCH[2]!.id);
  t.equal((await api(cp, 'GET', '/traces?model=gpt-4o', { token: owner.accessToken })).body.total, 2, 'exact model match');
  const one = await api(cp, 'GET', `/traces/${BATCH[1]!.id}`, { token: owner.accessToken });
  t.match(one.body, { id: BATCH[1]!.id, model: 'gpt-4o', enforcement: 'ENHANCE', latencyMs: 12 });
  const missing = await api(cp, 'GET', '/traces/tr_missing', { token: owner.accessToken });
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'NOT_FOUND');
});

t.test('usage: events with their pagination object, summary, models, classify', async (t) => {
  const owner = await signUp(cp);
  await ship(owner, BATCH);
  const events = await api(cp, 'GET', '/usage/events?limit=2', { token: owner.accessToken });
  t.same(events.body.pagination, { page: 1, limit: 2, total: 5, has_more: true });
  t.same(Object.keys(events.body.events[0]).sort(), ['cost_usd', 'enforcement_action', 'input_tokens', 'model', 'output_tokens', 'timestamp', 'token_utility', 'trace_id']);
  t.match(events.body.events[0], { trace_id: BATCH[4]!.id, timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, input_tokens: 100, enforcement_action: 'BYPASS', token_utility: 'USEFUL' });
  const last = await api(cp, 'GET', '/usage/events?page=3&limit=2', { token: owner.accessToken });
  t.same(last.body.pagination, { page: 3, limit: 2, total: 5, has_more: false });
  t.match(last.body.events, [{ trace_id: BATCH[0]!.id }]);
  t.equal((await api(cp, 'GET', '/usage/events?session_id=sess-2', { token: owner.accessToken })).body.pagination.total, 1);
  t.match((await api(cp, 'GET', '/usage/events?session_id=sess-2', { token: owner.accessToken })).body.events[0], { input_tokens: 0, cost_usd: 0, enforcement_action: 'KILL' });
  for (const q of ['page=0', 'limit=0', 'limit=101']) t.equal((await api(cp, 'GET', `/usage/events?${q}`, { token: owner.accessToken })).status, 400, q);

  const start = new Date(now - 86_400_000).toISOString();
  const end = new Date(now + 86_400_000).toISOString();
  const summary = await api(cp, 'GET', `/usage/summary?period=daily&start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`, { token: owner.accessToken });
  t.equal(summary.status, 200);
  t.match(summary.body, { period: 'daily', start, end, totals: { requests: 5, input_tokens: 1300, output_tokens: 160 }, by_enforcement: { BYPASS: 2, ENHANCE: 1, HIJACK: 1, KILL: 1 } });
  t.ok(Math.abs(summary.body.totals.cost_usd - 0.77) < 1e-9);
  t.ok(summary.body.buckets.length >= 1);
  for (const q of ['period=daily', `period=yearly&start=${start}&end=${end}`, `period=daily&start=${end}&end=${start}`, `period=daily&start=2026-01-01&end=${end}`]) {
    t.equal((await api(cp, 'GET', `/usage/summary?${q.replace(/\+/g, '%2B')}`, { token: owner.accessToken })).status, 400, q);
  }
  const models = await api(cp, 'GET', '/usage/models?period=monthly', { token: owner.accessToken });
  t.match(models.body.models, [{ model: 'gpt-4o', requests: 2 }, { model: 'gpt-4o-mini', requests: 3 }]);
  t.equal((await api(cp, 'GET', '/usage/models', { token: owner.accessToken })).status, 400, 'period is required');

  const classified = await api(cp, 'POST', '/usage/classify', { token: owner.accessToken, body: { trace_ids: [BATCH[0]!.id, BATCH[1]!.id, 'tr_unknown'], classification: 'WASTED', reason: 'retry loop' } });
  t.same(classified.body, { classified: 2 });
  t.equal((await api(cp, 'GET', `/traces/${BATCH[0]!.id}`, { token: owner.accessToken })).body.token_utility, 'WASTED');
  const bounds: unknown[] = [
    { trace_ids: [], classification: 'WASTED', reason: 'r' },
    { trace_ids: Array.from({ length: 501 }, (_, i) => `tr_${i}`), classification: 'WASTED', reason: 'r' },
    { trace_ids: ['tr_1'], classification: 'MEH', reason: 'r' },
    { trace_ids: ['tr_1'], classification: 'USEFUL', reason: '' },
    { trace_ids: ['tr_1'], classification: 'USEFUL', reason: 'r'.repeat(1001) },
    { trace_ids: ['tr_1'], classification: 'USEFUL' },
  ];
  for (const body of bounds) t.equal((await api(cp, 'POST', '/usage/classify', { token: owner.accessToken, body })).status, 400);
  const edge = await api(cp, 'POST', '/usage/classify', { token: owner.accessToken, body: { trace_ids: Array.from({ length: 500 }, (_, i) => `tr_${i}`), classification: 'USEFUL', reason: 'r'.repeat(1000) } });
  t.same(edge.body, { classified: 0 }, '500 ids and a 1,000-char reason are accepted');
});

t.test('budget: $100 a day when none is saved; caps set and removed; alerts at 50, 80 and 100 %', async (t) => {
  const owner = await signUp(cp);
  t.match((await api(cp, 'GET', '/budget', { token: owner.apiKey })).body, { dailyUsd: 100, dailyIsDefault: true, monthlyUsd: null, spentTodayUsd: 0 });
  t.same((await api(cp, 'GET', '/budget/alerts', { token: owner.apiKey })).body, { alerts: [] });
  const set = await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 1, monthlyUsd: 0.5 } });
  t.match(set.body, { dailyUsd: 1, dailyIsDefault: false, monthlyUsd: 0.5 });
  await ship(owner, BATCH);
  const alerts = (await api(cp, 'GET', '/budget/alerts', { token: owner.apiKey })).body.alerts;
  t.same(alerts.map((a: { period: string; thresholdPct: number }) => `${a.period}:${a.thresholdPct}`), ['daily:50', 'monthly:50', 'monthly:80', 'monthly:100']);
  t.match((await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: null } })).body, { dailyUsd: 100, dailyIsDefault: true, monthlyUsd: 0.5 }, 'null removes the saved daily cap');
  for (const body of [{}, { dailyUsd: -1 }, { dailyUsd: 'ten' }, { weeklyUsd: 5 }]) t.equal((await api(cp, 'PUT', '/budget', { token: owner.accessToken, body })).status, 400);
});
