import t from 'tap';
import { isWhitespace, trailingRunStart, withoutTrailingSlashes } from '../../src/lib/trailing-run.js';

t.test('the slashes a base URL ends with are trimmed, in linear time', async (t) => {
  t.equal(withoutTrailingSlashes('http://127.0.0.1:3001/'), 'http://127.0.0.1:3001');
  t.equal(withoutTrailingSlashes('http://h/api///'), 'http://h/api');
  t.equal(withoutTrailingSlashes('http://h/api'), 'http://h/api');
  t.equal(withoutTrailingSlashes('///'), '');
  // /\/+$/ read this (a million slashes and a letter) in quadratic time.
  const slashes = '/'.repeat(1_000_000);
  t.equal(withoutTrailingSlashes(`${slashes}x`), `${slashes}x`);
});

t.test('a trailing run is read back from its end, no lower than its floor', async (t) => {
  const text = 'ab  cd  ';
  t.equal(trailingRunStart(text, isWhitespace), 6);
  t.equal(trailingRunStart(text, (unit) => !isWhitespace(unit), 6), 4);
  t.equal(trailingRunStart(text, isWhitespace, 8, 7), 7);
  for (const blank of [' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u2003', '\u3000', '\ufeff']) t.ok(isWhitespace(blank.charCodeAt(0)), JSON.stringify(blank));
  for (const other of ['a', '_', '\u200b', '\ud83d']) t.notOk(isWhitespace(other.charCodeAt(0)), JSON.stringify(other));
});
