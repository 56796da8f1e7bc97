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
