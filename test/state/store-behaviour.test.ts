import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { MemoryStore } from '../../src/state/memory-store.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';
import type { LedgerOptions, Store } from '../../src/state/store.js';
import { startRedis } from '../helpers/redis.js';

/** One behaviour suite, run against both stores: they must be interchangeable. */

const NOON = Date.UTC(2026, 10, 21, 12); // 2026-11-21T12:00Z
const MIDNIGHT = Date.UTC(2026, 10, 22);
const HOUR = 3_600_000;

type MakeStore = (t: Test, opts?: LedgerOptions) => Promise<Store>;

/** Workspaces are unique per test, so a shared $REDIS_URL server needs no flushing. */
const workspace = (): string => `ws_${randomUUID().slice(0, 8)}`;

function storeBehaviour(t: Test, make: MakeStore): void {
  t.test('reserve holds the worst case; settle replaces it by the actual cost; release frees it', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const a = await store.reserve({ workspace: ws, id: 'a', amountUsd: 0.5, dailyCapUsd: 10, enforce: true, now: NOON });
    t.same(a, {
      allowed: true,
      overCap: false,
      degraded: false,
      budget: { spentTodayUsd: 0, reservedTodayUsd: 0.5, spentMonthUsd: 0, reservedMonthUsd: 0.5 },
    });
    const b = await store.reserve({ workspace: ws, id: 'b', amountUsd: 0.25, dailyCapUsd: 10, enforce: true, now: NOON });
    t.same(b.budget, { spentTodayUsd: 0, reservedTodayUsd: 0.75, spentMonthUsd: 0, reservedMonthUsd: 0.75 });

    await store.settle({ workspace: ws, id: 'a', actualUsd: 0.123456, now: NOON + 1000 });
    t.same(await store.snapshot(ws, NOON + 1000), { spentTodayUsd: 0.123456, reservedTodayUsd: 0.25, spentMonthUsd: 0.123456, reservedMonthUsd: 0.25 });
    await store.release({ workspace: ws, id: 'b', now: NOON + 2000 });
    t.same(await store.snapshot(ws, NOON + 2000), { spentTodayUsd: 0.123456, reservedTodayUsd: 0, spentMonthUsd: 0.123456, reservedMonthUsd: 0 });
    t.same(await store.snapshot(workspace(), NOON), { spentTodayUsd: 0, reservedTodayUsd: 0, spentMonthUsd: 0, reservedMonthUsd: 0 }, 'workspaces are separate');
  });

  t.test('settle is idempotent, charges an unknown id once, and never goes negative', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const reserve = (id: string, amountUsd: number) => store.reserve({ workspace: ws, id, amountUsd, dailyCapUsd: 10, enforce: true, now: NOON });
    await reserve('a', 1);
    await store.settle({ workspace: ws, id: 'a', actualUsd: 0.4, now: NOON });
    await store.settle({ workspace: ws, id: 'a', actualUsd: 0.4, now: NOON });
    await store.release({ workspace: ws, id: 'a', now: NOON });
    t.same(await store.snapshot(ws, NOON), { spentTodayUsd: 0.4, reservedTodayUsd: 0, spentMonthUsd: 0.4, reservedMonthUsd: 0 }, 'settled once');

    await store.settle({ workspace: ws, id: 'ghost', actualUsd: 0.1, now: NOON });
    await store.settle({ workspace: ws, id: 'ghost', actualUsd: 0.1, now: NOON });
    await store.release({ workspace: ws, id: 'never-reserved', now: NOON });
    t.same(await store.snapshot(ws, NOON), { spentTodayUsd: 0.5, reservedTodayUsd: 0, spentMonthUsd: 0.5, reservedMonthUsd: 0 }, 'unknown id charged once');

    await reserve('c', 0.3);
    const again = await reserve('c', 0.3);
    t.equal(again.allowed, true, 'a repeated reserve is allowed');
    t.equal(again.budget.reservedTodayUsd, 0.3, 'and holds nothing more');

    await t.rejects(reserve('d', -1), RangeError, 'a negative amount is a caller bug');
    await t.rejects(store.settle({ workspace: ws, id: 'c', actualUsd: Number.NaN, now: NOON }), RangeError);
  });

  t.test('hard cap: refuses at or over the daily cap until the next UTC midnight', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const reserve = (id: string, amountUsd: number, now = NOON) =>
      store.reserve({ workspace: ws, id, amountUsd, dailyCapUsd: 1, enforce: true, now });
    t.equal((await reserve('x', 0.6)).allowed, true);
    t.equal((await reserve('y', 0.6)).allowed, true, 'under the cap when it started: allowed, even though it ends over');
    const refused = await reserve('z', 0.01);
    t.same(refused, {
      allowed: false,
      reason: 'OVERAGE_HARD_CAP_EXCEEDED',
      cap: 'daily',
      retryAfterSeconds: 12 * 3600,
      degraded: false,
      budget: { spentTodayUsd: 0, reservedTodayUsd: 1.2, spentMonthUsd: 0, reservedMonthUsd: 1.2 },
    });

    await store.settle({ workspace: ws, id: 'x', actualUsd: 0.3, now: NOON });
    await store.settle({ workspace: ws, id: 'y', actualUsd: 0.7, now: NOON });
    t.match(await reserve('z', 0.01), { allowed: false, cap: 'daily' }, 'exactly at the cap refuses');
    t.match(await reserve('z', 0.01, MIDNIGHT - 1), { allowed: false, retryAfterSeconds: 1 }, 'still refused a millisecond before midnight');
    const next = await reserve('z', 0.01, MIDNIGHT);
    t.match(next, { allowed: true, overCap: false }, 'allowed from midnight');
    t.same(next.budget, { spentTodayUsd: 0, reservedTodayUsd: 0.01, spentMonthUsd: 1, reservedMonthUsd: 0.01 });
  });

  t.test('monthly cap: refuses until the next month starts', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const spend = async (id: string, usd: number, now: number) => {
      const r = await store.reserve({ workspace: ws, id, amountUsd: usd, dailyCapUsd: 100, monthlyCapUsd: 2, enforce: true, now });
      if (r.allowed) await store.settle({ workspace: ws, id, actualUsd: usd, now });
      return r;
    };
    await spend('d1', 1.5, Date.UTC(2026, 10, 29, 10));
    await spend('d2', 0.6, Date.UTC(2026, 10, 30, 10));
    const refused = await spend('d3', 0.01, Date.UTC(2026, 10, 30, 23, 59, 59));
    t.match(refused, { allowed: false, reason: 'OVERAGE_HARD_CAP_EXCEEDED', cap: 'monthly', retryAfterSeconds: 1 });
    t.match(await spend('d4', 0.01, Date.UTC(2026, 11, 1)), { allowed: true }, 'a new month');
  });

  t.test('soft mode never refuses but reports overCap', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const reserve = (id: string, monthlyCapUsd?: number) =>
      store.reserve({ workspace: ws, id, amountUsd: 1, dailyCapUsd: 0.5, monthlyCapUsd, enforce: false, now: NOON });
    t.match(await reserve('a'), { allowed: true, overCap: false });
    t.match(await reserve('b'), { allowed: true, overCap: true, cap: 'daily' });
    t.match(await reserve('c', 2), { allowed: true, overCap: true, cap: 'monthly' }, 'the monthly cap is named first');
    t.equal((await store.snapshot(ws, NOON)).reservedTodayUsd, 3, 'every reservation was held');
  });

  t.test('days and months roll over at UTC midnight', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const lateNov29 = Date.UTC(2026, 10, 29, 23);
    await store.reserve({ workspace: ws, id: 'a', amountUsd: 2, dailyCapUsd: 10, enforce: true, now: lateNov29 });
    await store.settle({ workspace: ws, id: 'a', actualUsd: 1.25, now: lateNov29 });
    const zero = { spentTodayUsd: 0, reservedTodayUsd: 0, spentMonthUsd: 0, reservedMonthUsd: 0 };
    t.same(await store.snapshot(ws, lateNov29 + 1), { ...zero, spentTodayUsd: 1.25, spentMonthUsd: 1.25 });
    t.same(await store.snapshot(ws, Date.UTC(2026, 10, 30)), { ...zero, spentMonthUsd: 1.25 }, 'new day, same month');
    t.same(await store.snapshot(ws, Date.UTC(2026, 11, 1)), zero, 'new day, new month');
  });

  t.test('a request reserved before midnight is charged to that day', async (t) => {
    const store = await make(t);
    const ws = workspace();
    await store.reserve({ workspace: ws, id: 'late', amountUsd: 1, dailyCapUsd: 10, enforce: true, now: MIDNIGHT - 1000 });
    await store.settle({ workspace: ws, id: 'late', actualUsd: 0.5, now: MIDNIGHT + 30_000 });
    t.same(await store.snapshot(ws, MIDNIGHT + 30_000), { spentTodayUsd: 0, reservedTodayUsd: 0, spentMonthUsd: 0.5, reservedMonthUsd: 0 });
    t.same(await store.snapshot(ws, MIDNIGHT - 1), { spentTodayUsd: 0.5, reservedTodayUsd: 0, spentMonthUsd: 0.5, reservedMonthUsd: 0 });
  });

  t.test('an unsettled reservation expires after its TTL (a crashed proxy)', async (t) => {
    const store = await make(t, { reservationTtlMs: 60_000 });
    const ws = workspace();
    await store.reserve({ workspace: ws, id: 'lost', amountUsd: 1, dailyCapUsd: 1, enforce: true, now: NOON });
    t.equal((await store.snapshot(ws, NOON + 59_999)).reservedTodayUsd, 1);
    t.match(await store.reserve({ workspace: ws, id: 'other', amountUsd: 0.1, dailyCapUsd: 1, enforce: true, now: NOON + 59_999 }), { allowed: false });
    t.equal((await store.snapshot(ws, NOON + 60_000)).reservedTodayUsd, 0, 'released when the TTL is up');
    await store.settle({ workspace: ws, id: 'lost', actualUsd: 0.2, now: NOON + 61_000 });
    await store.settle({ workspace: ws, id: 'lost', actualUsd: 0.2, now: NOON + 62_000 });
    t.same(await store.snapshot(ws, NOON + 62_000), { spentTodayUsd: 0.2, reservedTodayUsd: 0, spentMonthUsd: 0.2, reservedMonthUsd: 0 }, 'a late settle is charged once');
  });

  t.test('exact-response cache: bytes in, bytes out, per workspace, with a TTL', async (t) => {
    const store = await make(t);
    const ws = workspace();
    const value = Buffer.from([0, 1, 2, 255, 0x7b]);
    t.equal(await store.cacheGet(ws, 'k'), undefined);
    await store.cacheSet(ws, 'k', value, 60_000);
    t.same(await store.cacheGet(ws, 'k'), value);
    t.equal(await store.cacheGet(workspace(), 'k'), undefined, 'another workspace does not see it');
    await store.cacheSet(ws, 'short', value, 30);
    t.same(await store.cacheGet(ws, 'short'), value);
    await sleep(80);
    t.equal(await store.cacheGet(ws, 'short'), undefined, 'expired');
  });
}

t.test('MemoryStore', async (t) => {
  storeBehaviour(t, async (t, opts) => {
    const store = new MemoryStore(opts);
    t.teardown(() => store.close());
    t.same(store.health(), { kind: 'memory', connected: true });
    return store;
  });

  t.test('remembers a settled id as long as a reservation lives, not a day: nothing it settles is replayed', async (t) => {
    const store = new MemoryStore({ reservationTtlMs: 60_000 });
    t.teardown(() => store.close());
    const ws = workspace();
    const settle = (now: number) => store.settle({ workspace: ws, id: 'a', actualUsd: 0.1, now });
    await store.reserve({ workspace: ws, id: 'a', amountUsd: 1, dailyCapUsd: 10, enforce: true, now: NOON });
    await settle(NOON);
    await settle(NOON + 59_999);
    t.equal((await store.snapshot(ws, NOON + 59_999)).spentTodayUsd, 0.1, 'a repeat within the window adds nothing');
    await settle(NOON + 60_000);
    t.equal((await store.snapshot(ws, NOON + 60_000)).spentTodayUsd, 0.2, 'past it the id is forgotten');
  });

  t.test('remembers at most maxSettledIds settled ids across workspaces, forgetting the oldest first', async (t) => {
    const store = new MemoryStore({ maxSettledIds: 3 });
    t.teardown(() => store.close());
    const [first, second] = [workspace(), workspace()];
    const settle = (ws: string, id: string) => store.settle({ workspace: ws, id, actualUsd: 0.1, now: NOON });
    const spent = async (ws: string) => (await store.snapshot(ws, NOON)).spentTodayUsd;
    await settle(first, 'a');
    for (const id of ['b', 'c', 'd']) await settle(second, id);
    for (const id of ['b', 'c', 'd']) await settle(second, id);
    t.equal(await spent(second), 0.3, 'the latest ids are remembered');
    await settle(first, 'a');
    t.equal(await spent(first), 0.2, "the oldest is forgotten past the bound, whichever workspace's: a repeat of it is charged again");
    const reserved = await store.reserve({ workspace: first, id: 'a', amountUsd: 1, dailyCapUsd: 10, enforce: true, now: NOON });
    t.equal(reserved.allowed, true);
    t.equal((await store.snapshot(first, NOON)).reservedTodayUsd, 0, 'a reserve of a remembered id holds nothing');
  });
});

t.test('RedisStore', async (t) => {
  const server = await startRedis(t);
  storeBehaviour(t, async (t, opts) => {
    // Generous deadlines: this suite checks Redis's answers, not the local fallback.
    const store = new RedisStore({ url: server.url, reserveTimeoutMs: 2000, settleTimeoutMs: 2000, readTimeoutMs: 2000, ...opts });
    t.teardown(() => store.close());
    t.equal(await store.ready(5000), true, 'connected');
    t.same(store.health(), { kind: 'redis', connected: true, pendingSettlements: 0, droppedSettlements: 0 });
    return store;
  });

  t.test('keeps one set entry per settled id, for the settled TTL, found whatever time a repeat carries', async (t) => {
    const store = new RedisStore({ url: server.url, reserveTimeoutMs: 2000, settleTimeoutMs: 2000, readTimeoutMs: 2000 });
    const redis = new Redis(server.url);
    t.teardown(async () => {
      redis.disconnect();
      await store.close();
    });
    const ws = workspace();
    const prefix = `svc:{${ws}}:`;
    const settle = (id: string, now: number) => store.settle({ workspace: ws, id, actualUsd: 0.01, now });
    const spentMonth = async (now: number) => Math.round((await store.snapshot(ws, now)).spentMonthUsd * 100);
    const ids = Array.from({ length: 100 }, (_, i) => `req_${i}`);
    await Promise.all(ids.map((id) => store.reserve({ workspace: ws, id, amountUsd: 1, dailyCapUsd: 1000, enforce: true, now: NOON })));
    await Promise.all(ids.map((id) => settle(id, NOON)));

    t.equal(await redis.exists(`${prefix}res`, `${prefix}ids`), 0, 'no reservation record is left behind a settle');
    const sets = await redis.keys(`${prefix}settled:*`);
    t.equal(sets.length, 1, 'the settled ids of one time bucket share one set');
    t.equal(await redis.scard(sets[0]!), 100);
    const ttl = await redis.pttl(sets[0]!);
    t.ok(ttl > 24 * HOUR && ttl <= 30 * HOUR, `the set lives the 24 h TTL past its bucket's end (${ttl} ms)`);
    t.equal(await spentMonth(NOON), 100);

    await settle('req_0', NOON);
    await settle('req_1', NOON + 23 * HOUR);
    await settle('ghost', NOON + 5 * HOUR);
    await settle('ghost', NOON + 7 * HOUR);
    t.equal(await spentMonth(NOON + 23 * HOUR), 101, 'repeats in the same bucket and in later ones add nothing; an unknown id is charged once');

    await redis.hset(`${prefix}res`, 'settled-before', 'S');
    await settle('settled-before', NOON);
    t.equal(await spentMonth(NOON), 101, 'an id recorded settled by an earlier release is settled');

    await settle('req_2', NOON + 31 * HOUR);
    t.equal(await spentMonth(NOON + 31 * HOUR), 102, 'past the TTL the id is forgotten');
  });
});
