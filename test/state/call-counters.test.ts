import t from 'tap';
import { CallCounters } from '../../src/state/call-counters.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0);

/** A Map that counts how often it is walked. */
class WalkedMap<K, V> extends Map<K, V> {
  walks = 0;
  override [Symbol.iterator](): MapIterator<[K, V]> {
    this.walks++;
    return super[Symbol.iterator]();
  }
}

function countOnce(counters: CallCounters, key: string, expiresAt: number, now = NOW): void {
  counters.count({ workspace: 'w', counters: [{ key, limit: 5, expiresAt }], now }, false);
}

t.test('past 10,000 counters the expired ones are swept out', async (t) => {
  const map = new WalkedMap<string, { count: number; expiresAt: number }>();
  const counters = new CallCounters(map);
  for (let i = 0; i < 10_000; i++) countOnce(counters, `short:${i}`, NOW + 1);
  t.equal(map.walks, 0, 'not swept at the bound');
  countOnce(counters, 'long', NOW + 3_600_000, NOW + 2);
  t.equal(map.size, 1, 'the expired counters are gone');
});

t.test('counters that are all live are not walked again on every call', async (t) => {
  const map = new WalkedMap<string, { count: number; expiresAt: number }>();
  const counters = new CallCounters(map);
  for (let i = 0; i < 11_000; i++) countOnce(counters, `live:${i}`, NOW + 3_600_000);
  t.equal(map.size, 11_000, 'nothing live is forgotten');
  t.equal(map.walks, 1, 'swept once when the bound was passed, not on each of the 1,000 calls after');
  // Swept at 10,001 live: the next sweep waits for twice that.
  for (let i = 11_000; i < 20_002; i++) countOnce(counters, `live:${i}`, NOW + 3_600_000);
  t.equal(map.walks, 1, 'and not again until the live counters have doubled');
  countOnce(counters, 'live:20002', NOW + 3_600_000);
  t.equal(map.walks, 2);
});
