import t from 'tap';
import OpenAI from 'openai';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';
import { startRedis } from '../helpers/redis.js';
import { nextUtcMidnight } from '../../src/state/index.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';

const hardCap = { enforcement_mode: 'hard', workspace_hard_cap_enabled: true };
const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function post(url: string, body = chat(), headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: () => JSON.parse(text) as Record<string, unknown> };
}

t.test('budget headers on every response; settled spend equals the traced cost', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { budget: { dailyUsd: 5, monthlyUsd: 50 } } });
  const res = await post(proxy.url);
  t.equal(res.status, 200);
  t.equal(res.headers['x-svc-budget-daily-limit'], '5');
  t.equal(res.headers['x-svc-budget-monthly-limit'], '50');
  t.ok(Number(res.headers['x-svc-budget-daily-remaining']) < 5, 'the reservation of this request already counts');
  const trace = proxy.sink.recent().at(-1)!;
  t.ok(trace.costUsd! > 0);
  await new Promise((r) => setTimeout(r, 20));
  const second = await post(proxy.url);
  t.equal(Number(second.headers['x-svc-budget-daily-remaining']) < 5 - trace.costUsd!, true, 'the first request is now settled spend');
  t.notOk(trace.usageEstimated);
});

t.test('no daily cap saved: $100 a day', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url });
  const res = await post(proxy.url);
  t.equal(res.headers['x-svc-budget-daily-limit'], '100');
  t.equal(res.headers['x-svc-budget-monthly-limit'], undefined);
});

t.test('usage estimated when the provider sends none, streams included', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url });
  await post(proxy.url, chat({ stream: true }), { 'x-mock-no-usage': '1' });
  const trace = proxy.sink.recent().at(-1)!;
  t.equal(trace.usageEstimated, true);
  t.ok(trace.outputTokens! > 0 && trace.outputTokens! <= 1000, 'estimated, capped at max_tokens');
  t.ok(trace.costUsd! > 0);
});

type Usage = Record<string, number | undefined>;

t.test("a stream's reported usage is metered, not estimated, on each wire", async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url });
  const streams = [
    { path: '/v1/chat/completions', body: chat({ stream: true, stream_options: { include_usage: true } }), input: (u: Usage) => u.prompt_tokens, output: (u: Usage) => u.completion_tokens },
    { path: '/v1/messages', body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'hi' }] }), input: (u: Usage) => u.input_tokens, output: (u: Usage) => u.output_tokens },
    { path: '/v1/responses', body: JSON.stringify({ model: 'gpt-4o', stream: true, input: 'hi' }), input: (u: Usage) => u.input_tokens, output: (u: Usage) => u.output_tokens },
  ];
  for (const stream of streams) {
    const res = await request(`${proxy.url}${stream.path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test' }, body: stream.body });
    const text = await res.body.text();
    t.equal(res.statusCode, 200, stream.path);
    // What the provider reported, read from the events the client received: the last of each figure.
    const usages = [...text.matchAll(/^data: (.*)$/gm)].flatMap((m) => {
      try {
        const data = JSON.parse(m[1]!);
        return [data.usage, data.message?.usage, data.response?.usage].filter((u): u is Usage => u !== undefined && u !== null);
      } catch {
        return [];
      }
    });
    const reported = (read: (u: Usage) => number | undefined) => usages.map(read).filter((n) => n !== undefined).at(-1);
    const trace = proxy.sink.recent().at(-1)!;
    t.equal(trace.usageEstimated, false, `${stream.path}: read from the stream`);
    t.equal(trace.inputTokens, reported(stream.input), `${stream.path}: input tokens`);
    t.equal(trace.outputTokens, reported(stream.output), `${stream.path}: output tokens`);
  }
});

t.test('soft mode over the cap: allowed, warned on the trace', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { budget: { dailyUsd: 0 } } });
  const res = await post(proxy.url);
  t.equal(res.status, 200);
  t.match(proxy.sink.recent().at(-1)!.warnings, ['over_daily_cap']);
});

t.test('two proxies sharing one Redis: 200 concurrent requests against a $1 hard cap', async (t) => {
  const redis = await startRedis(t);
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  let clock = Date.parse('2026-11-21T12:00:00Z');
  const file = { budget: { dailyUsd: 1 }, settings: hardCap };
  const proxies = await Promise.all(
    [0, 1].map(async () => {
      // What is under test is the shared decision, not Redis's latency: generous deadlines keep a
      // loaded machine from turning slow answers into local (degraded) decisions.
      const store = new RedisStore({ url: redis.url, reserveTimeoutMs: 5000, settleTimeoutMs: 5000, readTimeoutMs: 5000 });
      await store.ready(5000);
      return startProxy(t, { upstreamUrl: mock.url, file, store, clock: () => clock });
    }),
  );
  // gpt-4o at $2.50 / $10 per million: each request reserves about $0.04 for 4,000 output tokens,
  // and the mock answers with about 4,000 tokens, so settled costs come close to what was reserved.
  const body = chat({ max_tokens: 4000, mock: { content: 'x'.repeat(16_000) } });
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => post(proxies[i % 2]!.url, body)));
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 429);
  t.equal(ok + refused.length, 200, 'every request answered: allowed or refused');
  t.ok(refused.length > 0, `${refused.length} refused`);
  t.match(refused[0]!.json(), { error: { code: 'OVERAGE_HARD_CAP_EXCEEDED' } });
  t.ok(Number(refused[0]!.headers['retry-after']) > 0, 'retry-after until midnight UTC');
  await new Promise((r) => setTimeout(r, 200));
  const traces = proxies.flatMap((p) => p.sink.recent()).filter((tr) => tr.status === 200);
  const spent = traces.reduce((sum, tr) => sum + tr.costUsd!, 0);
  t.equal(proxies.flatMap((p) => p.sink.recent()).filter((tr) => tr.warnings.includes('store_degraded')).length, 0, 'every decision was Redis\'s');
  const largest = Math.max(...traces.map((tr) => tr.costUsd!));
  t.ok(spent <= 1 + largest, `settled $${spent.toFixed(4)} ≤ cap $1 + largest request $${largest.toFixed(4)}`);

  // Reservations are worst cases; settled costs are smaller, so the day may still have a little
  // room. Spend it, one request at a time, until the cap is really reached.
  let topUps = 0;
  while ((await post(proxies[topUps % 2]!.url, body)).status === 200) topUps++;
  t.ok(topUps < 30, `the cap was reached after ${topUps} more requests`);
  const later = await post(proxies[0]!.url);
  t.equal(later.status, 429, 'refused for the rest of the day');
  clock = nextUtcMidnight(clock) + 1000;
  const tomorrow = await post(proxies[1]!.url);
  t.equal(tomorrow.status, 200, 'allowed again after midnight UTC');
});

t.test('the hard cap surfaces in the openai client as a RateLimitError with our code', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { budget: { dailyUsd: 0 }, settings: hardCap } });
  const openai = new OpenAI({ apiKey: 'sk-x', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const err = (await openai.chat.completions.create({ model: 'gpt-4o', messages: [] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.type(err, OpenAI.RateLimitError);
  t.equal(err.code, 'OVERAGE_HARD_CAP_EXCEEDED');
  t.match(proxy.sink.recent().at(-1), { status: 429, enforcement: 'KILL' });
});

t.test('Redis killed mid-traffic and restarted: no crash, nothing left hanging, spend reconciled', async (t) => {
  const redis = await startRedis(t, { persistent: true });
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const store = new RedisStore({ url: redis.url });
  await store.ready(2000);
  // Every trace is summed below: a fast machine answers more than the sink's default ring keeps.
  const proxy = await startProxy(t, { upstreamUrl: mock.url, store, traceRing: 1_000_000 });
  const statuses: number[] = [];
  let running = true;
  const worker = async () => {
    while (running) {
      const res = await Promise.race([post(proxy.url), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('request hung')), 5000))]);
      statuses.push(res.status);
    }
  };
  const workers = Promise.all([worker(), worker(), worker(), worker()]);
  await new Promise((r) => setTimeout(r, 300));
  await redis.stop();
  await new Promise((r) => setTimeout(r, 500));
  await redis.start();
  await new Promise((r) => setTimeout(r, 500));
  running = false;
  await workers;
  t.ok(statuses.length > 20, `${statuses.length} requests`);
  t.ok(statuses.every((s) => s === 200), 'every request answered 200 through the outage');
  t.ok(proxy.sink.recent().some((tr) => tr.warnings.includes('store_degraded')), 'some were decided locally during the outage');

  t.equal(proxy.sink.recent().length, statuses.length, 'a trace for every request');
  const traced = proxy.sink.recent().reduce((sum, tr) => sum + (tr.costUsd ?? 0), 0);
  const observer = new RedisStore({ url: redis.url });
  t.teardown(() => observer.close());
  await observer.ready(2000);
  // The store keeps whole micro-dollars: each settlement rounds by at most half of one.
  const tolerance = statuses.length * 0.5e-6 + 1e-9;
  let spent = 0;
  for (let i = 0; i < 50; i++) {
    spent = (await observer.snapshot('local')).spentTodayUsd;
    if (Math.abs(spent - traced) <= tolerance) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(Math.abs(spent - traced) <= tolerance, `Redis holds $${spent.toFixed(6)}, the traces $${traced.toFixed(6)} (rounding allowance $${tolerance.toFixed(6)})`);
  t.equal((await observer.snapshot('local')).reservedTodayUsd, 0, 'nothing left reserved');
});
