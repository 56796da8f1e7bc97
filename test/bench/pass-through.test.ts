import t, { type Test } from 'tap';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startServer } from '../../bench/lib/children.js';
import { startMockProvider } from '../../bench/mock/provider.js';

const SCRIPT = fileURLToPath(new URL('../../bench/yardstick/pass-through.js', import.meta.url));

/** Starts the pass-through in front of `upstreamUrl`, as the bench does, and returns its URL. */
async function startPassThrough(t: Test, upstreamUrl: string): Promise<string> {
  const server = await startServer({ name: 'pass-through', script: SCRIPT, args: ['--upstream-url', upstreamUrl, '--port', '0'] });
  t.teardown(() => server.stop());
  return server.url;
}

const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

t.test('the pass-through relays answers as the provider gave them, with nothing of the proxy added', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const url = await startPassThrough(t, mock.url);

  const direct = await post(mock.url, chat());
  const relayed = await post(url, chat());
  t.equal(relayed.status, 200);
  t.equal(relayed.headers['content-type'], direct.headers['content-type']);
  t.equal(relayed.headers['content-length'], String(Buffer.byteLength(relayed.text)), 'a body of known length goes out whole, with its length');
  t.same(Object.keys(JSON.parse(relayed.text) as object), Object.keys(JSON.parse(direct.text) as object));
  t.notOk(Object.keys(relayed.headers).some((name) => name.startsWith('x-svc-')), 'no header of the proxy');

  const stream = await post(url, chat({ stream: true }), { 'x-mock-chunks': '5' });
  t.equal(stream.status, 200);
  t.match(stream.headers['content-type'], /^text\/event-stream/);
  t.match(stream.text, /data: \[DONE\]\n\n$/, 'a stream is relayed to its end');

  const refused = await post(url, chat(), { 'x-mock-status': '429' });
  t.equal(refused.status, 429, "the provider's refusal, with its request headers forwarded");
  t.match(JSON.parse(refused.text), { error: { type: String } });
});

t.test('an upstream that cannot be reached is a 502', async (t) => {
  const mock = await startMockProvider();
  const gone = mock.url;
  await mock.close();
  const url = await startPassThrough(t, gone);
  const res = await post(url, chat());
  t.equal(res.status, 502);
});
