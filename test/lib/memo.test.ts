import t from 'tap';
import { memoize } from '../../src/lib/memo.js';

t.test('memoize remembers up to its limit, then starts afresh; a key past maxKeyChars is never kept', async (t) => {
  const calls: string[] = [];
  const length = memoize((key: string) => (calls.push(key), key.length), 2, 5);
  t.same([length('ab'), length('ab'), length('abc'), length('ab')], [2, 2, 3, 2]);
  t.same(calls, ['ab', 'abc'], 'each key worked out once');
  length('abcd'); // the third key: the cache is cleared first
  length('ab');
  t.same(calls, ['ab', 'abc', 'abcd', 'ab']);
  t.equal(length('abcdef'), 6);
  t.equal(length('abcdef'), 6);
  t.same(calls.slice(-2), ['abcdef', 'abcdef'], 'a long key is worked out every time');
  const nothing = memoize(() => undefined, 4);
  t.equal(nothing('x'), undefined, 'undefined is remembered too');
});

t.test('memoize starts afresh once its keys would pass maxTotalChars in all', async (t) => {
  const calls: string[] = [];
  const length = memoize((key: string) => (calls.push(key), key.length), 100, Infinity, 6);
  length('abc');
  length('def');
  length('abc');
  t.same(calls, ['abc', 'def'], 'six characters in all are kept');
  length('g'); // a seventh character: the cache is cleared first
  length('g');
  length('abc');
  t.same(calls, ['abc', 'def', 'g', 'abc']);
});
