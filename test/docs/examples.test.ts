import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import { signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { runExample, runnableBlock } from '../helpers/docs.js';
import { startProxy } from '../helpers/proxy.js';

// Each SDK page's example, run as a user runs it against the real thing.

t.test('docs/client.md: the example runs against a real proxy that refuses card numbers', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { settings: { piiDetectors: { 'pii.card': 'block' } } } });
  const { stdout } = await runExample(t, await runnableBlock('client.md', 'client'), { SVC_PROXY_URL: proxy.url, SVC_API_KEY: 'sk-demo' });
  const lines = stdout.split('\n');
  t.match(lines[0], /^Hello from the mock provider\. tr_\w+ BYPASS$/);
  t.match(stdout, /daily headroom \(from the answer, no extra call\): \{ limitUsd: 100, remainingUsd: [\d.]+, spentUsd: null \}/);
  t.match(stdout, /finish: stop/);
  t.match(stdout, /refused \(trace tr_\w+\): dlp_blocked: Blocked by policy: pii\.card/);
  t.match(stdout, /verdict: \{\n\s+enforcement: 'KILL',/);
  t.equal(proxy.sink.recent().filter((r) => r.enforcement === 'KILL').length, 1);
});

t.test('docs/management.md: the example runs against a real control plane', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const { stdout } = await runExample(t, await runnableBlock('management.md', 'management'), { SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey });
  t.match(stdout, /acting as Owner \(OWNER\)/);
  t.match(stdout, /--api-key gwt_/);
  t.match(stdout, /resolved: workspace/);
  t.match(stdout, /the old one works until \d{4}-/);
  t.match(stdout, /revoked: NOT_FOUND/);
});
