import t from 'tap';
import { randomUUID } from 'node:crypto';
import { MemoryStore, type CallCounter, type Store } from '../../src/state/index.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';
import { startRedis } from '../helpers/redis.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0);
const counters = (limit: number, expiresAt = NOW + 3_600_000): CallCounter[] => [
  { key: 'hourly:h1', limit, expiresAt },
  { key: 'daily:d1', limit: 100, expiresAt: NOW + 86_400_000 },
];

async function countsUpTo(store: Store, workspace: string, calls: number) {
  const results = [];
  for (let i = 0; i < calls; i++) results.push(await store.countCall({ workspace, counters: counters(3), now: NOW }));
  return results;
}

t.test('memory store: counted until a counter is at its limit, then refused without counting', async (t) => {
  const results = await countsUpTo(new MemoryStore(), 'w', 5);
  t.same(
    results.map((r) => [r.exceeded, r.counts]),
    [
      [null, [1, 1]],
      [null, [2, 2]],
      [null, [3, 3]],
      [0, [3, 3]],
      [0, [3, 3]],
    ],
  );
  const later = await new MemoryStore().countCall({ workspace: 'w', counters: counters(3, NOW + 1), now: NOW + 2 });
  t.same(later.counts, [1, 1], 'an expired period starts again from nothing');
});

t.test('redis: 40 concurrent calls from two stores never count past a limit of 25', async (t) => {
  const server = await startRedis(t);
  const stores = [0, 1].map(() => new RedisStore({ url: server.url, reserveTimeoutMs: 5000, readTimeoutMs: 5000, settleTimeoutMs: 5000 }));
  for (const s of stores) t.teardown(() => s.close());
  t.same(await Promise.all(stores.map((s) => s.ready(5000))), [true, true]);
  const workspace = `ws_${randomUUID().slice(0, 8)}`;
  const limit = 25;
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2]!.countCall({ workspace, counters: counters(limit), now: NOW })));
  t.equal(results.filter((r) => r.exceeded === null).length, limit, 'exactly the limit was counted');
  t.ok(results.every((r) => !r.degraded), 'every decision was Redis’s');
  t.same(results.filter((r) => r.exceeded === null).map((r) => r.counts[0]).sort((a, b) => a! - b!), Array.from({ length: limit }, (_, i) => i + 1));
});

t.test('redis down: counted by this process and marked degraded', async (t) => {
  const server = await startRedis(t, { own: true });
  const store = new RedisStore({ url: server.url, reserveTimeoutMs: 5000, readTimeoutMs: 5000, settleTimeoutMs: 5000 });
  t.teardown(() => store.close());
  t.equal(await store.ready(5000), true);
  await server.stop();
  const results = await countsUpTo(store, `ws_${randomUUID().slice(0, 8)}`, 4);
  t.ok(results.every((r) => r.degraded), 'degraded');
  t.same(results.map((r) => r.exceeded), [null, null, null, 0], 'the limit still holds locally');
});
