import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { nextUtcMidnight } from '../../src/state/budget.js';
import { secondsUntil } from '../../src/state/periods.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';
import { startRedis } from '../helpers/redis.js';

/** mulberry32: a seeded PRNG, so a failure reproduces. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const NOW = Date.UTC(2026, 10, 21, 15);
const CAP_USD = 1;
const CAP_MICROS = 1_000_000;
const REQUESTS = 200;

t.test('200 concurrent requests through two proxies never overshoot a hard cap by more than one request', async (t) => {
  const server = await startRedis(t);
  // Two stores, two ioredis connections: two proxies sharing one Redis. Deadlines are generous so
  // every decision below is Redis's (asserted: none is degraded), which is what this test proves.
  const proxies = [0, 1].map(() => new RedisStore({ url: server.url, reserveTimeoutMs: 5000, settleTimeoutMs: 5000, readTimeoutMs: 5000 }));
  for (const store of proxies) t.teardown(() => store.close());
  t.same(await Promise.all(proxies.map((s) => s.ready(5000))), [true, true]);

  const ws = `ws_${randomUUID().slice(0, 8)}`;
  const random = prng(20261121);
  const requests = Array.from({ length: REQUESTS }, (_, i) => ({
    id: `req-${i}`,
    proxy: proxies[i % 2]!,
    worstMicros: 5_000 + Math.floor(random() * 45_000), // $0.005–$0.05
    actualShare: random(), // settles at a random share of its worst case
    startAfterMs: random() * 10,
    upstreamMs: random() * 30,
  }));
  const largest = Math.max(...requests.map((r) => r.worstMicros));

  const outcomes = await Promise.all(
    requests.map(async (r) => {
      await sleep(r.startAfterMs);
      const reserved = await r.proxy.reserve({ workspace: ws, id: r.id, amountUsd: r.worstMicros / 1e6, dailyCapUsd: CAP_USD, enforce: true, now: NOW });
      if (!reserved.allowed) return { reserved, settledMicros: 0 };
      await sleep(r.upstreamMs);
      const settledMicros = Math.floor(r.worstMicros * r.actualShare);
      await r.proxy.settle({ workspace: ws, id: r.id, actualUsd: settledMicros / 1e6, now: NOW + 1 });
      return { reserved, settledMicros };
    }),
  );

  t.equal(outcomes.filter((o) => o.reserved.degraded).length, 0, 'every decision was made by Redis');
  const allowed = outcomes.filter((o) => o.reserved.allowed).length;
  const refused = outcomes.filter((o) => !o.reserved.allowed && o.reserved.reason === 'OVERAGE_HARD_CAP_EXCEEDED').length;
  t.equal(allowed + refused, REQUESTS);
  t.ok(refused > 0, `the cap bound: ${allowed} allowed, ${refused} refused`);
  t.ok(requests.reduce((sum, r) => sum + r.worstMicros, 0) > 4 * CAP_MICROS, 'the burst asked for several times the cap');

  let settled = outcomes.reduce((sum, o) => sum + o.settledMicros, 0);
  t.ok(settled <= CAP_MICROS + largest, `settled $${settled / 1e6} ≤ cap + largest reservation $${(CAP_MICROS + largest) / 1e6}`);
  for (const store of proxies) {
    t.same(await store.snapshot(ws, NOW + 2), { spentTodayUsd: settled / 1e6, reservedTodayUsd: 0, spentMonthUsd: settled / 1e6, reservedMonthUsd: 0 }, 'Redis holds exactly what was settled');
  }

  // Requests settle below their worst case, so the day may end the burst under its cap: keep
  // spending (alternating proxies) until the cap refuses, and check the bound again.
  for (let i = 0; ; i++) {
    const proxy = proxies[i % 2]!;
    const r = await proxy.reserve({ workspace: ws, id: `top-${i}`, amountUsd: 0.05, dailyCapUsd: CAP_USD, enforce: true, now: NOW + 3 });
    if (!r.allowed) break;
    await proxy.settle({ workspace: ws, id: `top-${i}`, actualUsd: 0.05, now: NOW + 3 });
    settled += 50_000;
  }
  t.ok(settled >= CAP_MICROS && settled <= CAP_MICROS + Math.max(largest, 50_000), `at the cap: $${settled / 1e6}`);

  // Refused by both proxies until the next UTC midnight, allowed from it.
  const midnight = nextUtcMidnight(NOW);
  const attempt = (proxy: RedisStore, id: string, now: number) =>
    proxy.reserve({ workspace: ws, id, amountUsd: 0.01, dailyCapUsd: CAP_USD, enforce: true, now });
  t.match(await attempt(proxies[0]!, 'after-1', NOW + 4), { allowed: false, reason: 'OVERAGE_HARD_CAP_EXCEEDED', cap: 'daily', retryAfterSeconds: secondsUntil(midnight, NOW + 4) });
  t.match(await attempt(proxies[1]!, 'after-2', midnight - 1), { allowed: false, reason: 'OVERAGE_HARD_CAP_EXCEEDED', retryAfterSeconds: 1 });
  t.match(await attempt(proxies[1]!, 'after-3', midnight), { allowed: true, overCap: false, degraded: false });
});
