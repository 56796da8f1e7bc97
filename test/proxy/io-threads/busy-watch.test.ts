import t from 'tap';
import { BusyWatch } from '../../../src/proxy/io-threads/busy-watch.js';

t.test('another thread starts only after the threshold is held for the whole run of samples', (t) => {
  const watch = new BusyWatch(0.75, 3);
  t.same([0.9, 0.9].map((u) => watch.sample(u, 10)), [false, false]);
  t.equal(watch.sample(0.5, 10), false, 'a quiet second starts the count again');
  t.same([0.8, 0.75, 0.99].map((u) => watch.sample(u, 10)), [false, false, true], 'three busy seconds in a row');
  t.same([0.9, 0.9, 0.9].map((u) => watch.sample(u, 10)), [false, false, true], 'and three more for the next one');
  t.end();
});

t.test('one request in flight, however busy, does not start a thread: it would not move', (t) => {
  const watch = new BusyWatch(0.75, 3);
  t.same([1, 1, 1, 1].map((u) => watch.sample(u, 1)), [false, false, false, false]);
  t.same([1, 1, 1].map((u) => watch.sample(u, 2)), [false, false, true]);
  t.end();
});

t.test('the defaults: 75% busy for 3 seconds', (t) => {
  const watch = new BusyWatch();
  t.same([0.74, 0.74, 0.74, 0.74].map((u) => watch.sample(u, 10)), [false, false, false, false]);
  t.same([0.76, 0.76, 0.76].map((u) => watch.sample(u, 10)), [false, false, true]);
  t.end();
});
