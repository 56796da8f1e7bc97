import t from 'tap';
import OpenAI from 'openai';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

let keyCounter = 0;
const uniqueKey = () => `k${process.pid}-${++keyCounter}`;

async function setup(t: Tap.Test, file: Record<string, unknown> = {}) {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file });
  return { mock, proxy };
}

async function post(url: string, body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra });

t.test('a 5xx is retried and the client gets the second attempt\'s answer', async (t) => {
  const { mock, proxy } = await setup(t);
  const res = await post(proxy.url, chat(), { 'x-mock-status': '503', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '1' });
  t.equal(res.status, 200);
  t.equal(mock.requests.length, 2);
  t.match(proxy.sink.recent().at(-1), { status: 200, attempts: [{ model: 'gpt-4o', provider: 'openai', status: 503, error: 'upstream_503' }] });
});

t.test('a 429 waits for its retry-after, then succeeds', async (t) => {
  const { mock, proxy } = await setup(t);
  const started = Date.now();
  const res = await post(proxy.url, chat(), { 'x-mock-status': '429', 'x-mock-retry-after': '0.3', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '1' });
  t.equal(res.status, 200);
  t.ok(Date.now() - started >= 280, 'honoured retry-after');
  t.equal(mock.requests.length, 2);
});

t.test('a reset before the first byte is retried', async (t) => {
  const { proxy } = await setup(t);
  const res = await post(proxy.url, chat(), { 'x-mock-reset': 'before', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '1' });
  t.equal(res.status, 200);
  t.match(proxy.sink.recent().at(-1)!.attempts, [{ status: null }]);
});

t.test('an error at the start of a stream is retried before the client\'s 200 is committed', async (t) => {
  const { mock, proxy } = await setup(t);
  const openai = new OpenAI({ apiKey: 'sk-x', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const stream = await openai.chat.completions.create(
    { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    { headers: { 'x-mock-stream-error': '1', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '1' } },
  );
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  t.equal(text, 'Hello from the mock provider.', 'a clean stream from the second attempt');
  t.equal(mock.requests.length, 2);
  t.match(proxy.sink.recent().at(-1)!.attempts, [{ error: 'stream_error' }]);
});

t.test('retries run out, then the fallback model answers', async (t) => {
  const { mock, proxy } = await setup(t, { settings: { upstreamRetry: { maxAttempts: 2, initialBackoffMs: 10, fallbacks: { 'gpt-4o': [{ model: 'gpt-4o-mini' }] } } } });
  const res = await post(proxy.url, chat(), { 'x-mock-status': '500', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '2' });
  t.equal(res.status, 200);
  t.same(mock.requests.map((r) => (r.body as { model: string }).model), ['gpt-4o', 'gpt-4o', 'gpt-4o-mini']);
  t.match(proxy.sink.recent().at(-1), { model: 'gpt-4o-mini', provider: 'openai', attempts: [{ model: 'gpt-4o', status: 500 }, { model: 'gpt-4o', status: 500 }] });
});

t.test('a fallback to a provider keeps the model; one that a check refuses is skipped', async (t) => {
  const { mock, proxy } = await setup(t, {
    settings: {
      allowedModels: ['gpt-4o', 'gpt-4.1'],
      upstreamRetry: { maxAttempts: 1, fallbacks: { 'gpt-4o': [{ model: 'gpt-4o-mini' }, { provider: 'azure' }, { model: 'gpt-4.1' }] } },
    },
  });
  const res = await post(proxy.url, chat(), { 'x-mock-status': '502', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '2' });
  t.equal(res.status, 200);
  const trace = proxy.sink.recent().at(-1)!;
  t.match(trace.attempts, [
    { model: 'gpt-4o', status: 502 },
    { model: 'gpt-4o-mini', error: 'model_not_allowed' },
    { model: 'azure_openai/gpt-4o', provider: 'azure_openai', status: 502 },
  ]);
  t.equal(trace.model, 'gpt-4.1');
  t.equal(mock.requests.length, 3);
});

t.test('not retried: a status outside onStatus, retries off, and everything exhausted', async (t) => {
  const { mock, proxy } = await setup(t);
  const bad = await post(proxy.url, chat(), { 'x-mock-status': '400' });
  t.equal(bad.status, 400);
  t.equal(mock.requests.length, 1, '400 is not retried');

  const off = await setup(t, { settings: { upstreamRetry: { enabled: false } } });
  const once = await post(off.proxy.url, chat(), { 'x-mock-status': '503', 'x-mock-key': uniqueKey(), 'x-mock-fail-times': '1' });
  t.equal(once.status, 503);
  t.equal(off.mock.requests.length, 1);

  const all = await setup(t, { settings: { upstreamRetry: { maxAttempts: 3, initialBackoffMs: 5 } } });
  const failed = await post(all.proxy.url, chat(), { 'x-mock-status': '503' });
  t.equal(failed.status, 503, 'the last attempt\'s error reaches the client');
  t.equal(all.mock.requests.length, 3);
  t.equal(all.proxy.sink.recent().at(-1)!.attempts.length, 2);
});

t.test('the retry budget: a retry-after longer than the budget is not waited for', async (t) => {
  const { proxy } = await setup(t, { settings: { upstreamRetry: { budgetMs: 200 } } });
  const started = Date.now();
  const res = await post(proxy.url, chat(), { 'x-mock-status': '429', 'x-mock-retry-after': '5' });
  t.equal(res.status, 429);
  t.ok(Date.now() - started < 2000, 'answered without sleeping through retry-after');
});
