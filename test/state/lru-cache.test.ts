import t from 'tap';
import { LruCache } from '../../src/state/lru-cache.js';

const kb = (n: number) => Buffer.alloc(n * 1024);

t.test('bounded in bytes: the least recently used entry goes first', async (t) => {
  const cache = new LruCache(3 * 1024 + 3 * 100);
  cache.set('a', kb(1), 60_000, 0);
  cache.set('b', kb(1), 60_000, 0);
  cache.set('c', kb(1), 60_000, 0);
  t.ok(cache.get('a', 1), 'a touched: now the most recent');
  cache.set('d', kb(1), 60_000, 1);
  t.equal(cache.get('b', 2), undefined, 'b, the least recently used, was evicted');
  t.ok(cache.get('a', 2));
  t.ok(cache.get('c', 2));
  t.ok(cache.get('d', 2));
  t.ok(cache.bytes <= cache.maxBytes);
  t.equal(cache.size, 3);
});

t.test('entries expire; replacing one frees its bytes; an oversized value is not stored', async (t) => {
  const cache = new LruCache(10 * 1024);
  cache.set('k', kb(2), 100, 0);
  t.ok(cache.get('k', 99));
  t.equal(cache.get('k', 100), undefined, 'expired at its TTL');
  t.equal(cache.bytes, 0, 'and its bytes freed');
  cache.set('k', kb(2), 1000, 0);
  const before = cache.bytes;
  cache.set('k', kb(1), 1000, 0);
  t.equal(cache.bytes, before - 1024);
  cache.set('huge', kb(11), 1000, 0);
  t.equal(cache.get('huge', 1), undefined);
  t.ok(cache.get('k', 1), 'storing an oversized value evicted nothing');
});
