import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { spawnProxy } from '../helpers/proxy.js';

const run = promisify(execFile);
const HEAP_SIZING = fileURLToPath(new URL('../../dist/proxy/heap-sizing.js', import.meta.url));
/** Both semi-spaces at the cap. */
const CAP = 2 * 8 * 1024 * 1024;

/**
 * A process that sizes its heap as the proxy does and allocates as a server does (objects that
 * live a while, the event loop turning in between), first with the cap wanted, then without it.
 * Answers the largest young generation (both semi-spaces) seen in each phase.
 */
const SCRIPT = `
import { getHeapSpaceStatistics } from 'node:v8';
import { setImmediate as turn } from 'node:timers/promises';
const { sizeProxyHeap } = await import(process.argv[1]);
let wanted = true;
const heap = sizeProxyHeap();
heap.capWhile(() => wanted);
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const live = [];
async function allocate() {
  let peak = 0;
  for (let i = 0; i < 1_500_000; i++) {
    live.push({ i, text: 'request ' + i });
    if (live.length > 40_000) live.splice(0, 20_000);
    if (i % 2_000 === 0) {
      await turn();
      peak = Math.max(peak, young());
    }
  }
  return peak;
}
const capped = await allocate();
wanted = false;
const free = await allocate();
console.log(JSON.stringify({ capped, free }));
`;

t.test('the young generation stops growing at its cap while the cap is wanted, and grows as V8 would once it is not', async (t) => {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT, HEAP_SIZING], { timeout: 120_000 });
  const { capped, free } = JSON.parse(stdout) as { capped: number; free: number };
  t.ok(capped <= CAP, `capped: ${capped} bytes`);
  t.ok(capped >= CAP / 2, `it still grows up to the cap: ${capped} bytes`);
  t.ok(free > CAP, `without the cap: ${free} bytes`);
});

t.test("a young generation the operator sized on node's command line is left to grow as they said", async (t) => {
  const { stdout } = await run(process.execPath, ['--max-semi-space-size=16', '--input-type=module', '-e', SCRIPT, HEAP_SIZING], { timeout: 120_000 });
  const { capped } = JSON.parse(stdout) as { capped: number };
  t.ok(capped > CAP, `with the cap wanted: ${capped} bytes`);
});

t.test('svc proxy keeps its young generation at the cap from start-up and under load', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const home = t.testdir({ 'config.json': '{}' });
  // Started as a user starts it: not through the test runner's TypeScript loader, whose own start-up would fill the young generation first.
  const proxy = await spawnProxy(t, ['--io-threads', '1', '--upstream-url', mock.url, '--config', join(home, 'config.json')], { SVC_HOME: home, NODE_OPTIONS: '' });
  const young = async () => Number(/svc_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/.exec(await (await fetch(`${proxy.url}/metrics`)).text())![1]);
  t.ok((await young()) <= CAP, 'once ready');
  // Enough requests that V8 would grow it to twice the cap (measured: it does without one).
  const pool = new Pool(proxy.url, { connections: 20 });
  t.teardown(() => pool.close());
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Refactor the cache. '.repeat(50) }] });
  let sent = 0;
  const statuses = new Set<number>();
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (sent++ < 4000) {
        const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        statuses.add(res.statusCode);
        await res.body.dump();
      }
    }),
  );
  t.same([...statuses], [200]);
  const after = await young();
  t.ok(after <= CAP, `after 4,000 requests: ${after} bytes`);
});
