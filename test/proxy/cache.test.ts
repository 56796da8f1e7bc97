import t from 'tap';
import OpenAI from 'openai';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

const cacheOn = { settings: { featureFlags: { ff_response_cache_exact: true } } };
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', temperature: 0, messages: [{ role: 'user', content: 'What is 2+2?' }], ...extra });

async function setup(t: Tap.Test, file: Record<string, unknown>) {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file });
  return { mock, proxy };
}

async function post(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

t.test('off by default: every request goes upstream, no cache header', async (t) => {
  const { mock, proxy } = await setup(t, {});
  await post(proxy.url, chat());
  const second = await post(proxy.url, chat());
  t.equal(mock.requests.length, 2);
  t.equal(second.headers['x-svc-cache'], undefined);
});

t.test('an identical request is answered from the cache and costs nothing', async (t) => {
  const { mock, proxy } = await setup(t, cacheOn);
  const first = await post(proxy.url, chat(), { authorization: 'Bearer sk-one' });
  t.equal(first.headers['x-svc-cache'], 'miss');
  await new Promise((r) => setTimeout(r, 20));
  const second = await post(proxy.url, chat({ user: 'someone-else' }), { authorization: 'Bearer sk-two' });
  t.equal(second.headers['x-svc-cache'], 'hit', 'auth, headers and user are not part of the key');
  t.equal(second.text, first.text);
  t.equal(mock.requests.length, 1);
  const trace = proxy.sink.recent().at(-1)!;
  t.match(trace, { cache: 'hit', costUsd: 0, status: 200 });
  const third = await post(proxy.url, chat({ temperature: 0.5 }));
  t.equal(third.headers['x-svc-cache'], 'miss', 'a sampling change is another request');
  t.equal(mock.requests.length, 2);
});

t.test('a cached stream is replayed as a stream', async (t) => {
  const { mock, proxy } = await setup(t, cacheOn);
  const openai = new OpenAI({ apiKey: 'sk-x', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const read = async () => {
    const { data: stream, response } = await openai.chat.completions.create({ ...chat(), stream: true } as OpenAI.Chat.ChatCompletionCreateParamsStreaming).withResponse();
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    return { text, cache: response.headers.get('x-svc-cache') };
  };
  const first = await read();
  await new Promise((r) => setTimeout(r, 20));
  const second = await read();
  t.same(second, { text: first.text, cache: 'hit' });
  t.equal(first.cache, 'miss');
  t.equal(mock.requests.length, 1);
  const streamedAgain = await post(proxy.url, chat());
  t.equal(streamedAgain.headers['x-svc-cache'], 'miss', 'a streamed and a plain request are different entries');
});

t.test('failures are not cached, and workspaces do not share entries', async (t) => {
  const { mock, proxy } = await setup(t, { ...cacheOn, settings: { ...cacheOn.settings, upstreamRetry: { enabled: false } } });
  const failed = await post(proxy.url, chat(), { 'x-mock-status': '500' });
  t.equal(failed.status, 500);
  const retried = await post(proxy.url, chat());
  t.equal(retried.headers['x-svc-cache'], 'miss');
  await new Promise((r) => setTimeout(r, 20));
  const other = await post(proxy.url, chat(), { 'x-workspace-id': 'ws_other' });
  t.equal(other.headers['x-svc-cache'], 'miss', 'another workspace');
  t.equal(mock.requests.length, 3);
});
