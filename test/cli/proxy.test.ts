import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { CLI, spawnProxy } from '../helpers/proxy.js';
import { occupiedPort } from '../helpers/ports.js';

const streamBody = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function mock(t: Tap.Test) {
  const m = await startMockProvider();
  t.teardown(() => m.close());
  return m;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
}

t.test('one ready line with the address; flags and SVC_* variables both work', async (t) => {
  const m = await mock(t);
  const home = t.testdir();
  const byFlag = await spawnProxy(t, ['--upstream-url', m.url], { SVC_HOME: home });
  // Up to one I/O thread per core, when the machine has more than one.
  t.match(byFlag.readyLine, /^svc proxy listening on http:\/\/127\.0\.0\.1:\d+ \(config local-[0-9a-f]{12}(, up to \d+ I\/O threads)?, open local mode, upstream http:\/\/127\.0\.0\.1:\d+\)$/);
  const byEnv = await spawnProxy(t, [], { SVC_HOME: home, SVC_UPSTREAM_URL: m.url, SVC_VIRTUAL_KEYS: 'vk_env_key_0000001' });
  t.notMatch(byEnv.readyLine, /open local mode/);
  const res = await request(`${byEnv.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer vk_env_key_0000001' },
    body: streamBody,
  });
  t.equal(res.statusCode, 200);
  await res.body.text();
  byEnv.child.kill('SIGTERM');
  t.equal(await byEnv.exited, 0);
  const traces = readFileSync(join(home, 'traces', 'traces.jsonl'), 'utf8').trim().split('\n');
  t.match(JSON.parse(traces.at(-1)!), { route: '/v1/chat/completions', stream: true, status: 200 }, 'traces are flushed to ~/.svc/traces on exit');
});

t.test('SIGTERM lets an in-flight stream finish, then exits 0', async (t) => {
  const m = await mock(t);
  const proxy = await spawnProxy(t, ['--upstream-url', m.url], { SVC_HOME: t.testdir() });
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mock-chunks': '8', 'x-mock-chunk-delay-ms': '100' },
    body: streamBody,
  });
  const text = res.body.text();
  await sleep(150);
  proxy.child.kill('SIGTERM');
  t.match(await text, /data: \[DONE\]/, 'the stream completed');
  t.equal(await proxy.exited, 0);
});

t.test('past the drain bound the remaining streams are cut and the process exits', async (t) => {
  const m = await mock(t);
  const dir = t.testdir({ 'config.json': JSON.stringify({ limits: { drainTimeoutMs: 200 } }) });
  const proxy = await spawnProxy(t, ['--upstream-url', m.url, '--config', join(dir, 'config.json')], { SVC_HOME: dir });
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mock-chunks': '100', 'x-mock-chunk-delay-ms': '100' },
    body: streamBody,
  });
  const started = Date.now();
  const text = res.body.text().then(
    () => 'ended',
    () => 'cut',
  );
  await sleep(100);
  proxy.child.kill('SIGTERM');
  t.equal(await proxy.exited, 0);
  t.ok(Date.now() - started < 3000, 'exited within the bound, not after the stream');
  t.equal(await text, 'cut', 'the client sees a cut stream, not a clean end');
});

t.test('refusals at start: open mode on a public address, a bad config, a bad flag', async (t) => {
  const open = await runCli(['proxy', '--port', '0', '--host', '0.0.0.0']);
  t.equal(open.code, 2);
  t.match(open.stderr, /no virtual key is configured.*loopback/);
  const dir = t.testdir();
  const file = join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify({ settings: { allowedModels: 'gpt-4o' } }));
  const bad = await runCli(['proxy', '--port', '0', '--config', file]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /invalid config: settings\.allowedModels/);
  writeFileSync(file, '{not json');
  t.match((await runCli(['proxy', '--config', file])).stderr, /not valid JSON/);
  const port = await runCli(['proxy', '--port', 'eighty']);
  t.equal(port.code, 2);
  t.match(port.stderr, /invalid option: port/);
});

t.test('a taken port: svc proxy exits 2 naming the port instead of sharing it', async (t) => {
  const port = await occupiedPort(t);
  const taken = await runCli(['proxy', '--port', String(port), '--threads', '1'], { SVC_HOME: t.testdir() });
  t.equal(taken.code, 2);
  t.match(taken.stderr, `svc: cannot listen on 127.0.0.1:${port}: the port is already in use`);
});

// Garbage Buffers may pile up to V8's external-memory soft limit (64 MiB) before a GC runs, so the
// stream is made well past that: a proxy that buffered would grow by the stream's size.
t.test('a long stream (160 MiB, well past 64 MiB) read by a slow client keeps the proxy\'s RSS bounded', async (t) => {
  const m = await mock(t);
  const proxy = await spawnProxy(t, ['--upstream-url', m.url], { SVC_HOME: t.testdir() });
  const status = () => readFileSync(`/proc/${proxy.child.pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())![1]);
  const total = 160 * 1024 * 1024;
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mock-stream-bytes': String(total) },
    body: streamBody,
  });
  const baseline = kib('VmRSS');
  let received = 0;
  let sincePause = 0;
  for await (const chunk of res.body) {
    received += chunk.length;
    sincePause += chunk.length;
    if (sincePause > 2 * 1024 * 1024) {
      sincePause = 0;
      await sleep(20); // about 100 MB/s at most: slower than the proxy and mock can go
    }
  }
  t.ok(received >= total, `received ${received} bytes`);
  const peakGrowthMiB = (kib('VmHWM') - baseline) / 1024;
  t.ok(peakGrowthMiB < 80, `peak RSS grew ${peakGrowthMiB.toFixed(1)} MiB while relaying 160 MiB`);
});
