import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

// The example of docs/client.md, run as a user runs it: an .mjs file importing 'svc/client' (from
// dist/), against a real proxy that refuses card numbers, in front of the mock provider.

t.setTimeout(300_000);

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

t.test('docs/client.md: the example runs against a real proxy', async (t) => {
  const page = await readFile(join(ROOT, 'docs', 'client.md'), 'utf8');
  const code = /<!-- runnable: client -->\n```js\n([\s\S]*?)\n```/.exec(page)?.[1];
  if (code === undefined) throw new Error('docs/client.md has no runnable block');
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { settings: { piiDetectors: { 'pii.card': 'block' } } } });
  // Inside the package folder, so that 'svc/client' resolves to this package's own export.
  const dir = await mkdtemp(join(ROOT, 'test', 'client', '.run-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'client-demo.mjs'), code);
  const { stdout } = await run(process.execPath, [join(dir, 'client-demo.mjs')], { env: { ...process.env, SVC_PROXY_URL: proxy.url, SVC_API_KEY: 'sk-demo' }, timeout: 120_000 });
  const lines = stdout.split('\n');
  t.match(lines[0], /^Hello from the mock provider\. tr_\w+ BYPASS$/);
  t.match(stdout, /daily headroom \(from the answer, no extra call\): \{ limitUsd: 100, remainingUsd: [\d.]+, spentUsd: null \}/);
  t.match(stdout, /finish: stop/);
  t.match(stdout, /refused \(trace tr_\w+\): dlp_blocked: Blocked by policy: pii\.card/);
  t.match(stdout, /verdict: \{\n\s+enforcement: 'KILL',/);
  t.equal(proxy.sink.recent().filter((r) => r.enforcement === 'KILL').length, 1);
});
