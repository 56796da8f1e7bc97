import t from 'tap';
import { withoutTrailingSlashes } from '../../src/lib/base-url.js';

t.test('the slashes a base URL ends with are trimmed, in linear time', async (t) => {
  t.equal(withoutTrailingSlashes('http://127.0.0.1:3001/'), 'http://127.0.0.1:3001');
  t.equal(withoutTrailingSlashes('http://h/api///'), 'http://h/api');
  t.equal(withoutTrailingSlashes('http://h/api'), 'http://h/api');
  t.equal(withoutTrailingSlashes('///'), '');
  // /\/+$/ read this (a million slashes and a letter) in quadratic time.
  const slashes = '/'.repeat(1_000_000);
  t.equal(withoutTrailingSlashes(`${slashes}x`), `${slashes}x`);
});
