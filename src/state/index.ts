/** The shared-state layer: the Store interface, its two implementations, and the budget helpers. */
import type { Logger } from '../lib/logger.js';
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
import type { RedisStoreOptions } from './redis/redis-store.js';
import type { Store } from './store.js';

export type * from './store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export type { RedisStoreOptions } from './redis/redis-store.js';
export { HardCapExceededError } from './errors.js';
export * from './budget.js';

/**
 * A RedisStore when a Redis/Valkey URL is configured, else the embedded MemoryStore. The Redis
 * client is loaded only then: a process on the embedded store does not pay its memory.
 */
export async function createStore(
  opts: { valkeyUrl: string | undefined; logger?: Logger } & Omit<RedisStoreOptions, 'url' | 'logger'> & MemoryStoreOptions,
): Promise<Store> {
  const { valkeyUrl, ...rest } = opts;
  if (valkeyUrl === undefined) return new MemoryStore(rest);
  const { RedisStore } = await import('./redis/redis-store.js');
  return new RedisStore({ ...rest, url: valkeyUrl });
}
