import t from 'tap';
import { availableParallelism } from 'node:os';
import { maxAutoIoThreads, proxyOptionsFromEnv } from '../../src/cli/proxy-command.js';

t.test('--io-threads: auto by default, a number from the flag or SVC_IO_THREADS, the flag first', (t) => {
  t.equal(proxyOptionsFromEnv({}, {}).ioThreads, 'auto');
  t.equal(proxyOptionsFromEnv({}, { SVC_IO_THREADS: '' }).ioThreads, 'auto', 'an empty variable is unset');
  t.equal(proxyOptionsFromEnv({}, { SVC_IO_THREADS: '3' }).ioThreads, 3);
  t.equal(proxyOptionsFromEnv({ ioThreads: '2' }, { SVC_IO_THREADS: '3' }).ioThreads, 2);
  t.equal(proxyOptionsFromEnv({ ioThreads: 'auto' }, { SVC_IO_THREADS: '3' }).ioThreads, 'auto');
  for (const bad of ['0', '65', '1.5', 'two']) t.throws(() => proxyOptionsFromEnv({ ioThreads: bad }, {}), /invalid option: ioThreads/, bad);
  t.end();
});

t.test('auto grows to one thread per core on Linux only', (t) => {
  t.equal(maxAutoIoThreads('linux'), Math.min(64, availableParallelism()));
  t.equal(maxAutoIoThreads('darwin'), 1);
  t.equal(maxAutoIoThreads('win32'), 1);
  t.end();
});
