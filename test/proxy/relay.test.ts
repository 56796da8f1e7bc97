import t from 'tap';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });
const json = { 'content-type': 'application/json' };

async function setup(t: Tap.Test, file: Record<string, unknown> = {}) {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file });
  return { mock, proxy };
}

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'POST', headers: { ...json, ...headers }, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

t.test('a client abort mid-stream aborts the upstream request', async (t) => {
  const { mock, proxy } = await setup(t);
  const controller = new AbortController();
  const aborted = once(mock.events, 'aborted');
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...json, 'x-mock-chunks': '200', 'x-mock-chunk-delay-ms': '20' },
    body: chat({ stream: true }),
    signal: controller.signal,
  });
  t.equal(res.statusCode, 200);
  for await (const _chunk of res.body) {
    controller.abort();
    break;
  }
  const [info] = await aborted;
  t.match(info, { route: 'chat' }, 'the mock saw the connection close');
  while (proxy.server.inflightCount > 0) await new Promise((r) => setTimeout(r, 10));
  t.match(proxy.sink.recent().at(-1), { status: 200, error: 'client_closed' }, 'the trace keeps the status sent and says the client left');
});

t.test('a stream reaches the client as it is answered: the status line with the first events, the end with the last', async (t) => {
  const { proxy } = await setup(t);
  // The default policy redacts streams, so each event is read and passed on as it comes.
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...json, 'x-mock-chunks': '3', 'x-mock-chunk-delay-ms': '300' },
    body: chat({ stream: true }),
  });
  t.equal(res.statusCode, 200);
  t.match(res.headers['x-svc-trace-id'], /\S/, 'our headers are on the status line');
  const reads: string[] = [];
  for await (const chunk of res.body) reads.push((chunk as Buffer).toString());
  t.ok(reads.length >= 3, `the body came in several reads, as the upstream sent it (${reads.length})`);
  t.notMatch(reads[0], /\[DONE\]/, 'the first read was not held until the end');
  t.match(reads.join(''), /data: \[DONE\]\n\n$/, 'and the stream ends whole');
  t.match(proxy.sink.recent().at(-1), { status: 200, error: null });
});

/** An OpenAI chat chunk with `content` as its delta, as an SSE event. */
const delta = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;

/** The text a client assembles from OpenAI chat chunk events. */
const contentOf = (events: string[]) =>
  events.map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content ?? '').join('');

/**
 * An upstream that answers every request with `events` as a chunked event stream, a chunk per
 * event as providers send them, the whole response in one socket write (so the proxy reads it at
 * once). `cut`: the stream never ends; the connection closes right after the events.
 */
async function oneWriteStreamUpstream(t: Tap.Test, events: string[], { cut = false } = {}): Promise<string> {
  const body = events.map((e) => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`).join('') + (cut ? '' : '0\r\n\r\n');
  const response = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${body}`;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let received = Buffer.alloc(0);
    socket.on('data', (data) => {
      received = Buffer.concat([received, data]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString())?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      received = received.subarray(headEnd + 4 + length);
      if (cut) socket.end(response);
      else socket.write(response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

t.test("a stream's events that arrive in one read are relayed together: redaction holds back only what the read ends with", async (t) => {
  // Read event by event, the digits ending a delta could begin a card and were held for the next one.
  const deltas = ['Your order ', '12', '34 ships on the 5', 'th, card 4539 1488 0343 6467', ' was charged; the receipt is in your inbox as usual, thank you.'];
  const events = [...deltas.map(delta), 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'];
  const upstreamUrl = await oneWriteStreamUpstream(t, events);
  const proxy = await startProxy(t, { upstreamUrl });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat({ stream: true }), { authorization: 'Bearer sk-agent-key' });
  t.equal(res.status, 200);
  for (const d of deltas.slice(1, 3)) t.ok(res.text.includes(delta(d)), `${JSON.stringify(d)} went out as the provider sent it`);
  const text = contentOf(res.text.split('\n\n').filter((e) => e.startsWith('data: {')));
  t.equal(text, 'Your order 1234 ships on the 5th, card [REDACTED:pii.card] was charged; the receipt is in your inbox as usual, thank you.');
  t.notMatch(res.text, /4539|1488|6467/);
  t.match(res.text, /data: \[DONE\]\n\n$/);
});

t.test('a stream cut off right after events of the same read relays those events whole, then an error event', async (t) => {
  const upstreamUrl = await oneWriteStreamUpstream(t, [delta('The build '), delta('passed on '), delta('the second try')], { cut: true });
  const proxy = await startProxy(t, { upstreamUrl, file: { settings: { upstreamRetry: { enabled: false } } } });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat({ stream: true }), { authorization: 'Bearer sk-agent-key' });
  t.equal(res.status, 200, 'the events began the stream');
  const events = res.text.split('\n\n').filter(Boolean);
  const last = JSON.parse(events.at(-1)!.slice(6)) as { error?: { code?: string } };
  t.equal(last.error?.code, 'upstream_reset', 'the stream ends with a well-formed error event');
  const text = contentOf(events.slice(0, -1));
  t.equal(text, 'The build passed on the second try', 'every delta before the cut reached the client, the held word included');
  t.match(proxy.sink.recent().at(-1), { status: 200, error: 'upstream_reset' });
});

t.test('upstream 5xx reaches the client with its status, the provider\'s body and a trace id', async (t) => {
  const { proxy } = await setup(t);
  const res = await post(`${proxy.url}/v1/chat/completions`, chat(), { 'x-mock-status': '503' });
  t.equal(res.status, 503);
  t.match(res.json(), { error: { type: String } });
  t.match(res.headers['x-svc-trace-id'], /^tr_/);
  t.equal(proxy.sink.recent().at(-1)!.error, 'upstream_503');
});

t.test('upstream 429 keeps its retry-after', async (t) => {
  const { proxy } = await setup(t, { settings: { upstreamRetry: { enabled: false } } });
  const res = await post(`${proxy.url}/v1/messages`, JSON.stringify({ model: 'claude-sonnet-4', max_tokens: 8, messages: [] }), {
    'x-mock-status': '429',
    'x-mock-retry-after': '7',
  });
  t.equal(res.status, 429);
  t.equal(res.headers['retry-after'], '7');
  t.match(res.json(), { type: 'error', error: { type: String } }, 'Anthropic shape on the Anthropic route');
});

t.test('an upstream reset before the response gives 502 upstream_reset in the route\'s shape', async (t) => {
  const { proxy } = await setup(t);
  const res = await post(`${proxy.url}/v1/chat/completions`, chat(), { 'x-mock-reset': 'before' });
  t.equal(res.status, 502);
  t.match(res.json(), { error: { code: 'upstream_reset', type: 'api_error', trace_id: /^tr_/ } });
});

t.test('an upstream reset mid-stream ends the client stream with a well-formed error event', async (t) => {
  const { proxy } = await setup(t);
  const openai = await post(`${proxy.url}/v1/chat/completions`, chat({ stream: true }), { 'x-mock-reset': 'mid', 'x-mock-chunks': '10' });
  t.equal(openai.status, 200, 'the status line was already sent');
  const events = openai.text.split('\n\n').filter(Boolean);
  const last = events.at(-1)!;
  t.match(last, /^data: /);
  t.match(JSON.parse(last.slice(6)), { error: { code: 'upstream_reset' } });
  for (const e of events.slice(0, -1)) t.doesNotThrow(() => JSON.parse(e.slice(6)), 'every relayed event is whole');

  const anthropic = await post(`${proxy.url}/v1/messages`, JSON.stringify({ model: 'claude-sonnet-4', max_tokens: 8, stream: true, messages: [] }), {
    'x-mock-reset': 'mid',
    'x-mock-chunks': '10',
  });
  t.match(anthropic.text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error".*"code":"upstream_reset"/);
});

t.test('an upstream that does not answer in time gives 504 upstream_timeout', async (t) => {
  const { proxy } = await setup(t, { limits: { upstreamHeadersTimeoutMs: 200 } });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat(), { 'x-mock-delay-ms': '2000' });
  t.equal(res.status, 504);
  t.match(res.json(), { error: { code: 'upstream_timeout' } });
});

t.test('a stream that goes silent past the body timeout ends with an error event', async (t) => {
  const { proxy } = await setup(t, { limits: { upstreamBodyTimeoutMs: 200 } });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat({ stream: true }), { 'x-mock-chunk-delay-ms': '1000', 'x-mock-chunks': '3' });
  t.equal(res.status, 200);
  t.match(res.text, /"code":"upstream_timeout"/);
});

t.test('an unreachable upstream gives 502 upstream_unreachable', async (t) => {
  const proxy = await startProxy(t, { upstreamUrl: 'http://127.0.0.1:1' });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat());
  t.equal(res.status, 502);
  t.match(res.json(), { error: { code: 'upstream_unreachable' } });
});

t.test('bad input: malformed JSON 400, wrong content type 415, over the cap 413, unknown route 404', async (t) => {
  const { proxy, mock } = await setup(t, { limits: { maxBodyBytes: 2048 } });
  const before = mock.requests.length;
  const malformed = await post(`${proxy.url}/v1/chat/completions`, '{"model": "gpt-4o",');
  t.equal(malformed.status, 400);
  t.match(malformed.json(), { error: { code: 'invalid_request', trace_id: /^tr_/ } });
  const notObject = await post(`${proxy.url}/v1/chat/completions`, '[1,2]');
  t.equal(notObject.status, 400);
  const noModel = await post(`${proxy.url}/v1/chat/completions`, '{"messages":[]}');
  t.match(noModel.json(), { error: { code: 'invalid_request', param: 'model' } });
  const wrongType = await post(`${proxy.url}/v1/chat/completions`, chat(), { 'content-type': 'text/plain' });
  t.equal(wrongType.status, 415);
  t.match(wrongType.json(), { error: { code: 'unsupported_media_type' } });
  const tooBig = await post(`${proxy.url}/v1/chat/completions`, chat({ pad: 'x'.repeat(4096) }));
  t.equal(tooBig.status, 413);
  // Chunked upload without a content-length: the cap is enforced while reading.
  const chunked = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: json,
    body: (async function* () {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(1024, 'x');
    })(),
  });
  t.equal(chunked.statusCode, 413);
  await chunked.body.dump();
  const missing = await request(`${proxy.url}/v2/whatever`);
  t.equal(missing.statusCode, 404);
  t.match(await missing.body.json(), { error: { code: 'not_found', type: 'not_found_error' } });
  t.equal(mock.requests.length, before, 'nothing bad was sent upstream');
  const anthropicBad = await post(`${proxy.url}/v1/messages`, '{nope');
  t.match(anthropicBad.json(), { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_request' } });
});

t.test('hop-by-hop headers are stripped both ways; provider headers pass', async (t) => {
  const { proxy, mock } = await setup(t);
  const res = await post(`${proxy.url}/v1/chat/completions`, chat(), {
    'openai-organization': 'org-1',
    'proxy-authorization': 'Basic x',
    te: 'trailers',
    'x-workspace-id': 'ws_hdr',
  });
  t.equal(res.status, 200);
  const seen = mock.requests.at(-1)!.headers;
  t.equal(seen['openai-organization'], 'org-1');
  t.equal(seen['proxy-authorization'], undefined);
  t.equal(seen['x-workspace-id'], undefined);
  t.equal(res.headers['transfer-encoding'], undefined);
  t.equal(proxy.sink.recent().at(-1)!.workspace, 'ws_hdr');
});

t.test('the agent\'s own provider key passes through when the proxy holds none; a platform key wins', async (t) => {
  const mock = await startMockProvider({ requireKey: 'sk-platform-key-1' });
  t.teardown(() => mock.close());
  const open = await startProxy(t, { upstreamUrl: mock.url });
  const own = await post(`${open.url}/v1/chat/completions`, chat(), { authorization: 'Bearer sk-platform-key-1' });
  t.equal(own.status, 200);
  const withPlatform = await startProxy(t, { upstreamUrl: mock.url, env: { OPENAI_API_KEY: 'sk-platform-key-1' } });
  const platform = await post(`${withPlatform.url}/v1/chat/completions`, chat(), { authorization: 'Bearer sk-wrong-agent-key' });
  t.equal(platform.status, 200);
  const neither = await post(`${open.url}/v1/chat/completions`, chat(), { authorization: 'Bearer sk-wrong' });
  t.equal(neither.status, 401, 'the provider\'s own 401 is relayed');
});

t.test('azure_openai goes to its tenant endpoint with api-version and the api-key header', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, {
    file: { providers: { azure_openai: { endpoint: mock.url, apiKey: 'azure-key-0001', apiVersion: '2024-10-21' } } },
  });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat({ model: 'azure/gpt-4o' }));
  t.equal(res.status, 200);
  const seen = mock.requests.at(-1)!;
  t.equal(seen.path, '/openai/deployments/gpt-4o/chat/completions');
  t.same(seen.query, { 'api-version': '2024-10-21' });
  t.equal(seen.headers['api-key'], 'azure-key-0001');
  t.equal((seen.body as { model: string }).model, 'gpt-4o', 'the provider prefix is stripped');
});

t.test('ollama goes to its apiBase; bedrock and vertex answer 501', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { file: { providers: { ollama: { apiBase: mock.url } } } });
  const res = await post(`${proxy.url}/v1/chat/completions`, chat({ model: 'ollama/qwen3:8b' }));
  t.equal(res.status, 200);
  t.equal(mock.requests.at(-1)!.path, '/v1/chat/completions');
  const bedrock = await post(`${proxy.url}/v1/chat/completions`, chat({ model: 'bedrock/anthropic.claude-3' }));
  t.equal(bedrock.status, 501);
  t.match(bedrock.json(), { error: { code: 'provider_not_supported' } });
});

t.test('health and models', async (t) => {
  const { proxy } = await setup(t, { keys: [{ key: 'vk_health_check_01' }] });
  const health = await request(`${proxy.url}/health`);
  const body = (await health.body.json()) as Record<string, unknown>;
  t.match(body, { status: 'ok', version: String, configVersion: /^local-/, uptimeSeconds: Number, workers: { threads: 1 }, store: null });
  const models = await request(`${proxy.url}/v1/models`);
  t.equal(models.statusCode, 401, 'models need a key when keys are configured');
  await models.body.dump();
  const authed = await request(`${proxy.url}/v1/models`, { headers: { authorization: 'Bearer vk_health_check_01' } });
  t.equal(authed.statusCode, 200);
  t.match(await authed.body.json(), { object: 'list', data: Array });
});

t.test('the query string goes upstream as the client sent it', async (t) => {
  const { mock, proxy } = await setup(t);
  const messages = JSON.stringify({ model: 'claude-sonnet-4', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  t.equal((await post(`${proxy.url}/v1/messages?beta=true`, messages)).status, 200);
  t.match(mock.requests.at(-1), { path: '/v1/messages', query: { beta: 'true' } });
  t.equal((await post(`${proxy.url}/v1/chat/completions?a=1&b=two%20words`, chat())).status, 200);
  t.same(mock.requests.at(-1)!.query, { a: '1', b: 'two words' });
  t.equal((await post(`${proxy.url}/v1/chat/completions`, chat())).status, 200);
  t.same(mock.requests.at(-1)!.query, {}, 'no query, none added');
});
