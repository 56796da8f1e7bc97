import t from 'tap';
import { SlotSet } from '../../src/lib/slot-set.js';

const item = (name: string) => ({ name, slot: -1 });

t.test('holds what was added until it is deleted, reusing freed slots', async (t) => {
  const set = new SlotSet<ReturnType<typeof item>>();
  const [a, b, c] = [item('a'), item('b'), item('c')];
  set.add(a);
  set.add(b);
  set.add(b);
  t.equal(set.size, 2, 'adding twice holds once');
  t.ok(set.has(a) && set.has(b) && !set.has(c));
  t.same([...set].map((i) => i.name), ['a', 'b']);

  t.equal(set.delete(a), true);
  t.equal(set.delete(a), false, 'deleting what is not held says so');
  t.equal(set.delete(c), false);
  t.equal(a.slot, -1, 'a deleted item is marked outside the set');
  t.notOk(set.has(a));
  set.add(c);
  t.equal(c.slot, 0, "the freed slot is reused, so the array grows only with what is in flight at once");
  t.same([...set].map((i) => i.name).sort(), ['b', 'c']);
  t.equal(set.size, 2);
});

t.test('an item deleted and added again, or deleted while the set is read, is seen right', async (t) => {
  const set = new SlotSet<ReturnType<typeof item>>();
  const items = ['a', 'b', 'c', 'd'].map(item);
  for (const i of items) set.add(i);
  const seen: string[] = [];
  for (const i of set) {
    seen.push(i.name);
    set.delete(i);
  }
  t.same(seen, ['a', 'b', 'c', 'd'], 'deleting the current item does not skip the next');
  t.equal(set.size, 0);
  set.add(items[2]!);
  t.ok(set.has(items[2]!));
  t.notOk(set.has(items[0]!), 'a stale slot number does not make an item a member');
});
