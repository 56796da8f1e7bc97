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

t.test('over a long run of reads and writes it keeps exactly the most recently used entries', async (t) => {
  const entryBytes = 1 + 100 + 64; // a one-character key, the value, the bookkeeping
  const cache = new LruCache(50 * entryBytes);
  const reference: string[] = []; // least recently used first
  const touch = (key: string) => {
    const at = reference.indexOf(key);
    if (at >= 0) reference.splice(at, 1);
    reference.push(key);
  };
  let seed = 7;
  const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  for (let i = 0; i < 20_000; i++) {
    const key = String.fromCharCode(65 + Math.floor(random() * 58));
    if (random() < 0.5) {
      if (cache.get(key, 0) !== undefined) touch(key);
    } else {
      cache.set(key, Buffer.alloc(100 - key.length), 60_000, 0);
      touch(key);
      if (reference.length > 50) reference.shift();
    }
  }
  t.equal(cache.size, reference.length);
  t.ok(reference.every((key) => cache.get(key, 0) !== undefined), 'every entry the reference keeps is there');
});
