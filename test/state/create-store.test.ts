import t from 'tap';
import { createStore, MemoryStore } from '../../src/state/index.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';

t.test('createStore: Redis when a URL is configured, else memory', async (t) => {
  const memory = await createStore({ valkeyUrl: undefined });
  t.ok(memory instanceof MemoryStore);
  // Nothing listens on port 1: the store must come up anyway, decide locally and close cleanly.
  const redis = await createStore({ valkeyUrl: 'valkey://127.0.0.1:1' });
  t.ok(redis instanceof RedisStore);
  t.match(await redis.reserve({ workspace: 'ws', id: 'a', amountUsd: 1, dailyCapUsd: 1, enforce: true }), { allowed: true, degraded: true });
  t.match(redis.health(), { kind: 'redis', connected: false });
  await Promise.all([memory.close(), redis.close()]);
});
