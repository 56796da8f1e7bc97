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

/** A 1,000-character text that differs from the others only at `at`, which no sketch reads. */
const variant = (at: number) => `${'a'.repeat(17 + at)}b${'a'.repeat(982 - at)}`;

t.test('memoize tells long keys apart by comparing them whole, even when they look alike', async (t) => {
  const calls: string[] = [];
  const first = memoize((key: string) => (calls.push(key), key.indexOf('b')), 100);
  const plain = 'a'.repeat(1000);
  t.same([first(plain), first(variant(0)), first(variant(1)), first(plain), first(variant(0)), first(variant(1))], [-1, 17, 18, -1, 17, 18]);
  t.equal(calls.length, 3, 'each long key worked out once');
  t.equal(first(`${plain}`.slice(0, 999) + 'a'), -1, 'an equal text made anew is found');
  t.equal(calls.length, 3);
  const nothing = memoize((key: string) => (calls.push(key), undefined), 4);
  nothing(plain);
  nothing(plain);
  t.equal(calls.length, 4, 'undefined is remembered for a long key too');
});

t.test('memoize works out every time a long key that looks like eight it remembers', async (t) => {
  let calls = 0;
  const at = memoize((key: string) => (calls++, key.indexOf('b')), 100);
  for (let i = 0; i < 8; i++) at(variant(i));
  for (let i = 0; i < 8; i++) at(variant(i));
  t.equal(calls, 8, 'eight alike are remembered');
  t.equal(at(variant(8)), 25);
  t.equal(at(variant(8)), 25);
  t.equal(calls, 10, 'a ninth is worked out each time');
  t.equal(at('c'.repeat(1000)), -1);
  t.equal(at('c'.repeat(1000)), -1);
  t.equal(calls, 11, 'another long key is still remembered');
});

t.test('long keys count toward both bounds', async (t) => {
  let calls = 0;
  const length = memoize((key: string) => (calls++, key.length), 100, Infinity, 2000);
  length('x'.repeat(1000));
  length('y'.repeat(1000));
  length('x'.repeat(1000));
  t.equal(calls, 2, 'two thousand characters in all are kept');
  length('z'.repeat(1000)); // past the bound: forgotten first
  length('x'.repeat(1000));
  t.equal(calls, 4);
  let counted = 0;
  const few = memoize((key: string) => (counted++, key.length), 2);
  few('x'.repeat(100));
  few('short');
  few('y'.repeat(100)); // the third key: forgotten first
  few('short');
  t.equal(counted, 4, 'short and long keys share the limit');
});

t.test('each long key counts toward the limit, however many share a sketch', async (t) => {
  let calls = 0;
  const at = memoize((key: string) => (calls++, key.indexOf('b')), 3);
  for (let i = 0; i < 3; i++) at(variant(i));
  at(variant(0));
  t.equal(calls, 3, 'three alike are remembered');
  at(variant(3)); // the fourth: the memo starts afresh
  at(variant(0));
  t.equal(calls, 5);
});
