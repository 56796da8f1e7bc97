import t from 'tap';
import { traceId, ulid } from '../../src/lib/ids.js';

t.test('trace ids are tr_ + a 26-character ULID that sorts by time', async (t) => {
  const id = traceId();
  t.match(id, /^tr_[0-9A-HJKMNP-TV-Z]{26}$/);
  const earlier = ulid(1_700_000_000_000);
  const later = ulid(1_700_000_000_001);
  t.ok(earlier < later);
  const many = new Set(Array.from({ length: 5000 }, () => ulid(1)));
  t.equal(many.size, 5000, 'random part differs');
});

t.test('a ULID is the time and the random bits in Crockford base32, most significant first', async (t) => {
  const time = 1_700_000_000_123;
  const id = ulid(time);
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const decoded = [...id].reduce((n, c) => n * 32n + BigInt(alphabet.indexOf(c)), 0n);
  t.equal(Number(decoded >> 80n), time, 'the first 48 bits are the milliseconds');
  t.equal(id.slice(0, 10), '01HF7YAT3V');
  const ids = Array.from({ length: 2000 }, () => ulid(time).slice(10));
  const seen = new Set(ids.join(''));
  t.equal(seen.size, 32, 'every base32 digit turns up in the random part');
  t.equal(traceId(time).slice(0, 13), 'tr_01HF7YAT3V');
});
