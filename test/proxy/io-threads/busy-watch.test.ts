import t from 'tap';
import { BusyWatch } from '../../../src/proxy/io-threads/busy-watch.js';

const IDLE = 1;

t.test('another thread starts only after the threshold is held for the whole run of samples', (t) => {
  const watch = new BusyWatch(0.75, 3, 0.5);
  t.same([0.9, 0.9].map((u) => watch.sample(u, 10, IDLE)), [null, null]);
  t.equal(watch.sample(0.5, 10, IDLE), null, 'a quiet second starts the count again');
  t.same([0.8, 0.75, 0.99].map((u) => watch.sample(u, 10, IDLE)), [null, null, 'start'], 'three busy seconds in a row');
  t.same([0.9, 0.9, 0.9].map((u) => watch.sample(u, 10, IDLE)), [null, null, 'start'], 'and three more for the next one');
  t.end();
});

t.test('one request in flight, however busy, does not start a thread: it would not move', (t) => {
  const watch = new BusyWatch(0.75, 3, 0.5);
  t.same([1, 1, 1, 1].map((u) => watch.sample(u, 1, IDLE)), [null, null, null, null]);
  t.same([1, 1, 1].map((u) => watch.sample(u, 2, IDLE)), [null, null, 'start']);
  t.end();
});

t.test('a machine with no core to spare over the busy run gets no thread, and says so', (t) => {
  const watch = new BusyWatch(0.75, 3, 0.5);
  t.same([0.1, 0.2, 0.3].map((idle) => watch.sample(0.9, 10, idle)), [null, null, 'no-idle-core']);
  t.same([0, 0.3, 1.2].map((idle) => watch.sample(0.9, 10, idle)), [null, null, 'start'], 'idle cores count on average over the run');
  t.same([0.9, 0.9].map((idle) => watch.sample(0.9, 10, idle)), [null, null]);
  t.equal(watch.sample(0.2, 10, 4), null, 'a quiet second forgets the idle cores counted so far');
  t.same([0.1, 0.1, 0.1].map((idle) => watch.sample(0.9, 10, idle)), [null, null, 'no-idle-core']);
  t.end();
});

t.test('the defaults: 75% busy for 3 seconds, half a core idle', (t) => {
  const watch = new BusyWatch();
  t.same([0.74, 0.74, 0.74, 0.74].map((u) => watch.sample(u, 10, IDLE)), [null, null, null, null]);
  t.same([0.76, 0.76, 0.76].map((u) => watch.sample(u, 10, IDLE)), [null, null, 'start']);
  t.same([0.49, 0.49, 0.49].map((idle) => watch.sample(0.9, 10, idle)), [null, null, 'no-idle-core']);
  t.same([0.5, 0.5, 0.5].map((idle) => watch.sample(0.9, 10, idle)), [null, null, 'start']);
  t.end();
});
