import t from 'tap';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra });

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  await res.body.text();
  return { status: res.statusCode, overhead: res.headers['x-svc-overhead-ms'], elapsedMs: performance.now() - started };
}

const overheadOf = (value: unknown) => {
  if (typeof value !== 'string' || !/^\d+\.\d\d$/.test(value)) throw new Error(`x-svc-overhead-ms is ${JSON.stringify(value)}`);
  return Number(value);
};

t.test("x-svc-overhead-ms is the proxy's own time: the upstream's wait is not in it", async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url });
  // The mock waits 400 ms before it answers; that wait lies inside the span the header leaves out.
  for (const [name, body] of [
    ['a chat completion', chat()],
    ['a stream', chat({ stream: true })],
  ] as const) {
    const res = await post(proxy.url, body, { 'x-mock-delay-ms': '400' });
    t.equal(res.status, 200, name);
    const overhead = overheadOf(res.overhead);
    t.ok(overhead >= 0, `${name}: ${overhead} ms`);
    t.ok(overhead + 400 <= res.elapsedMs, `${name}: ${overhead} ms of proxy time and 400 ms of upstream wait fit in the ${res.elapsedMs.toFixed(0)} ms the client waited`);
    t.equal(proxy.sink.recent().at(-1)!.overheadMs, overhead, `${name}: the trace records the same figure`);
  }
});

t.test('a refusal before any upstream call is all proxy time; retries count as upstream time', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { keys: [{ key: 'vk_test_overhead_0001' }] } });
  const refused = await post(proxy.url, chat());
  t.equal(refused.status, 401);
  t.ok(overheadOf(refused.overhead) <= refused.elapsedMs, 'the refusal carries the header too');
  t.match(proxy.sink.recent().at(-1), { status: 401, overheadMs: overheadOf(refused.overhead) }, 'and its trace');

  // A 503, then an answer: the backoff between the attempts is spent waiting on the upstream.
  const retried = await post(proxy.url, chat(), { authorization: 'Bearer vk_test_overhead_0001', 'x-mock-status': '503', 'x-mock-key': 'overhead-retry', 'x-mock-fail-times': '1', 'x-mock-delay-ms': '200' });
  t.equal(retried.status, 200);
  const trace = proxy.sink.recent().at(-1)!;
  t.equal(trace.attempts.length, 1, 'one failed attempt before the answer');
  t.ok(overheadOf(retried.overhead) + 2 * 200 <= retried.elapsedMs, `${retried.overhead} ms of proxy time beside two 200 ms upstream waits`);
});
