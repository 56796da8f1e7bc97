/** The shared-state layer: the Store interface, its two implementations, and the budget helpers. */
import type { Logger } from '../lib/logger.js';
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
import { RedisStore, type RedisStoreOptions } from './redis/redis-store.js';
import type { Store } from './store.js';

export type * from './store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { RedisStore, type RedisStoreOptions } from './redis/redis-store.js';
export { HardCapExceededError } from './errors.js';
export * from './budget.js';

/** A RedisStore when a Redis/Valkey URL is configured, else the embedded MemoryStore. */
export function createStore(
  opts: { valkeyUrl: string | undefined; logger?: Logger } & Omit<RedisStoreOptions, 'url' | 'logger'> & MemoryStoreOptions,
): Store {
  const { valkeyUrl, ...rest } = opts;
  return valkeyUrl === undefined ? new MemoryStore(rest) : new RedisStore({ ...rest, url: valkeyUrl });
}
