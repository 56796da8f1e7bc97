import t from 'tap';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { BUDGET_TTL_MS, GatewayUnreachableError, RequestRejectedError, SvcClient } from '../../src/client/index.js';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { freePort } from '../helpers/ports.js';
import { startProxy } from '../helpers/proxy.js';

// checkBudget against a real control plane, with a counting pass-through in front of it so each
// HTTP call the client makes is seen; the proxy's X-Svc-Budget-* headers refresh the same cache.
// Time is the test's own clock.

t.setTimeout(300_000);

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);
const set = await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 40, monthlyUsd: 500 } });
if (set.status !== 200) throw new Error(`PUT /budget answered ${set.status}`);

/** Budget calls seen on their way to the control plane. */
const seen: string[] = [];
const counter = createServer((req: IncomingMessage, res: ServerResponse) => {
  seen.push(`${req.method} ${req.url}`);
  void (async () => {
    const upstream = await request(`${cp.url}${req.url}`, { method: req.method as 'GET', headers: { authorization: req.headers.authorization ?? '' } });
    const body = await upstream.body.text();
    res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
    res.end(body);
  })().catch(() => {
    res.writeHead(502);
    res.end();
  });
});
counter.listen(0, '127.0.0.1');
await once(counter, 'listening');
t.teardown(
  () =>
    new Promise<void>((resolve) => {
      counter.closeAllConnections();
      counter.close(() => resolve());
    }),
);
const counterUrl = `http://127.0.0.1:${(counter.address() as { port: number }).port}`;

const mock = await startMockProvider();
t.teardown(() => mock.close());
const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { budget: { dailyUsd: 25, monthlyUsd: 300 } } });

function setup(t: Tap.Test, opts: { apiKey?: string; controlPlaneUrl?: string } = {}) {
  const clock = { now: 5_000_000 };
  const client = new SvcClient({ apiKey: opts.apiKey ?? owner.apiKey, baseUrl: proxy.url, controlPlaneUrl: opts.controlPlaneUrl ?? counterUrl, env: {}, clock: () => clock.now });
  t.teardown(() => client.close());
  return { client, clock };
}

t.test('one HTTP call per 30 seconds, shared by callers that ask at once', async (t) => {
  seen.length = 0;
  const { client, clock } = setup(t);
  const first = await client.checkBudget();
  t.same(first, {
    daily: { limitUsd: 40, remainingUsd: 40, spentUsd: 0 },
    monthly: { limitUsd: 500, remainingUsd: 500, spentUsd: 0 },
    source: 'control_plane',
    asOf: clock.now,
  });
  t.same(seen, ['GET /api/v1/budget'], 'the control plane route, with the client’s key');

  clock.now += BUDGET_TTL_MS - 1;
  t.equal(await client.checkBudget(), first, 'served from the cache until 30 s have passed');
  t.equal(seen.length, 1);

  clock.now += 1;
  const again = await Promise.all([client.checkBudget(), client.checkBudget(), client.checkBudget(), client.checkBudget()]);
  t.equal(seen.length, 2, 'after 30 s one more call, however many ask');
  t.ok(again.every((b) => b === again[0]));
  t.equal(again[0]!.asOf, clock.now);
});

t.test('the budget headers of a chat answer refresh the cache and restart its 30 seconds', async (t) => {
  seen.length = 0;
  const { client, clock } = setup(t);
  await client.checkBudget();
  t.equal(seen.length, 1);

  clock.now += 10_000;
  const answer = await client.chat('gpt-4o-mini', [{ role: 'user', content: 'hi' }]);
  t.match(answer.budget, { source: 'proxy_headers', daily: { limitUsd: 25, spentUsd: null }, monthly: { limitUsd: 300, spentUsd: null }, asOf: clock.now });
  t.ok(answer.budget!.daily.remainingUsd <= 25 && answer.budget!.daily.remainingUsd > 24, 'what is left of the proxy’s cap');

  clock.now += BUDGET_TTL_MS - 1;
  t.equal(await client.checkBudget(), answer.budget, 'checkBudget answers with what the chat learnt');
  t.equal(seen.length, 1, 'without asking the control plane (its own 30 s had passed)');

  const streamed = await client.stream('gpt-4o-mini', [{ role: 'user', content: 'hi' }]).final();
  t.match(streamed.budget, { source: 'proxy_headers', daily: { limitUsd: 25 } }, 'a stream refreshes it too');
  t.equal(await client.checkBudget(), streamed.budget);

  clock.now += BUDGET_TTL_MS;
  t.match(await client.checkBudget(), { source: 'control_plane', daily: { limitUsd: 40 } });
  t.equal(seen.length, 2, 'once the headers are 30 s old the control plane is asked');
});

t.test('a control plane that cannot answer is an error, and nothing is cached from it', async (t) => {
  const { client: wrongKey } = setup(t, { apiKey: 'vk_not_a_real_key_0000' });
  await t.rejects(wrongKey.checkBudget(), RequestRejectedError);
  await t.rejects(wrongKey.checkBudget(), { code: 'request_rejected', status: 401 }, 'asked again: a failure is not cached');
  const { client: nowhere } = setup(t, { controlPlaneUrl: `http://127.0.0.1:${await freePort()}` });
  await t.rejects(nowhere.checkBudget(), GatewayUnreachableError);
});
