import t from 'tap';
import { SettledIds } from '../../src/state/settled-ids.js';

t.test('keeps the latest ids within its bound, around the ring many times', async (t) => {
  const ids = new SettledIds(3);
  const owner = new Set<string>();
  for (let i = 0; i < 10; i++) ids.remember(owner, `id${i}`, 1_000 + i);
  t.same([...owner].sort(), ['id7', 'id8', 'id9']);
});

t.test('forgets ids when their time is up, each from its own set', async (t) => {
  const ids = new SettledIds(8);
  const [a, b] = [new Set<string>(), new Set<string>()];
  ids.remember(a, 'x', 100);
  ids.remember(b, 'x', 200);
  ids.remember(a, 'y', 300);
  ids.expire(99);
  t.same([[...a], [...b]], [['x', 'y'], ['x']], 'nothing is due yet');
  ids.expire(200);
  t.same([[...a], [...b]], [['y'], []]);
  ids.clear();
  t.same([...a], []);
  ids.remember(a, 'z', 400);
  t.same([...a], ['z'], 'a cleared ring takes ids again');
});

t.test('refuses a bound that is not a positive integer', async (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => new SettledIds(bad), RangeError);
});
