import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { spawnProxy } from '../helpers/proxy.js';
import { startRedis } from '../helpers/redis.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';
import type { TraceRecord } from '../../src/traces/trace.js';

t.test('two proxy processes sharing one Redis hold a $1 hard cap under 200 concurrent requests', async (t) => {
  const redis = await startRedis(t);
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const dir = t.testdir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ budget: { dailyUsd: 1 }, settings: { enforcement_mode: 'hard', workspace_hard_cap_enabled: true } }));
  const homes = [join(dir, 'a'), join(dir, 'b')];
  const proxies = await Promise.all(
    homes.map((home) => spawnProxy(t, ['--upstream-url', mock.url, '--config', config, '--valkey-url', redis.url], { SVC_HOME: home })),
  );
  const body = JSON.stringify({ model: 'gpt-4o', max_tokens: 4000, messages: [{ role: 'user', content: 'hi' }], mock: { content: 'x'.repeat(16_000) } });
  const statuses = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const res = await request(`${proxies[i % 2]!.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.body.dump();
      return res.statusCode;
    }),
  );
  const allowed = statuses.filter((s) => s === 200).length;
  t.equal(allowed + statuses.filter((s) => s === 429).length, 200, 'each request allowed or refused with 429');
  t.ok(allowed > 0 && allowed < 200, `${allowed} allowed`);

  for (const p of proxies) p.child.kill('SIGTERM');
  await Promise.all(proxies.map((p) => p.exited));
  const traces = homes.flatMap((home) =>
    readFileSync(join(home, 'traces', 'traces.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TraceRecord),
  );
  const costs = traces.filter((tr) => tr.status === 200).map((tr) => tr.costUsd!);
  const largest = Math.max(...costs);
  const observer = new RedisStore({ url: redis.url });
  t.teardown(() => observer.close());
  await observer.ready(2000);
  const spent = (await observer.snapshot('local')).spentTodayUsd;
  t.ok(spent <= 1 + largest, `settled $${spent.toFixed(4)} ≤ cap $1 + largest request $${largest.toFixed(4)}`);
  t.ok(Math.abs(spent - costs.reduce((a, b) => a + b, 0)) <= costs.length * 0.5e-6 + 1e-9, 'Redis and the traces agree');
  t.equal(traces.filter((tr) => tr.warnings.includes('store_degraded')).length, 0, 'every decision was made in Redis');
});
