import t from 'tap';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildRuntimeConfig } from '../../../src/config/runtime.js';
import { LocalSessionJudge } from '../../../src/policy/anomaly/sessions.js';
import { IoThreadGroup } from '../../../src/proxy/io-threads/group.js';
import type { ProxyServer } from '../../../src/proxy/server.js';
import { MemoryStore } from '../../../src/state/index.js';
import { TraceSink } from '../../../src/traces/sink.js';
import { until } from '../../helpers/until.js';

t.test('a thread that dies is started again; the others are not touched; close stops them all', async (t) => {
  const dir = t.testdir();
  process.env.SVC_TEST_CRASH_MARKER = join(dir, 'crashed');
  t.teardown(() => delete process.env.SVC_TEST_CRASH_MARKER);
  const logs: Array<{ msg: string; ioThread?: number }> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(JSON.parse(chunk.toString()) as { msg: string; ioThread?: number });
        done();
      },
    }),
  );
  // Only the thread's life is under test here: the main thread's server is not asked anything.
  const server = { inflightCount: 0 } as unknown as ProxyServer;
  const group = await IoThreadGroup.start({
    server,
    initial: 3,
    max: 3,
    host: '127.0.0.1',
    port: 0,
    config: buildRuntimeConfig({ file: undefined, upstreamUrl: undefined, extraKeys: [] }),
    inspectionThreads: 1,
    decideRoot: dir,
    store: new MemoryStore(),
    sink: new TraceSink({ dir: undefined }),
    holds: undefined,
    sessions: new LocalSessionJudge(),
    logger,
    threadUrl: new URL('../../fixtures/io-threads/crash-once-thread.mjs', import.meta.url),
  });
  const restarted = await until('the dead thread to be started again', () => logs.find((l) => l.msg === 'I/O thread exited; starting it again'));
  await until('three threads again', () => (group.size === 3 ? true : undefined));
  t.equal(logs.filter((l) => l.msg === 'I/O thread exited; starting it again').length, 1, 'one thread died, once');
  t.ok(restarted.ioThread === 1 || restarted.ioThread === 2);
  await group.close(1000);
  t.equal(group.size, 1, 'every other thread is gone after close');
});
