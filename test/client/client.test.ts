import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import {
  GatewayUnreachableError,
  RequestRejectedError,
  SvcClient,
  VerdictError,
  type ChatDelta,
  type HijackEvent,
  type OpenAIMessage,
  type Verdict,
} from '../../src/client/index.js';
import { freePort } from '../helpers/ports.js';
import { startProxy } from '../helpers/proxy.js';

// The client against a real proxy; only the model provider is a mock. The proxy refuses cards
// (DLP block) and MCP servers other than github (a model's call to one is substituted: HIJACK).

t.setTimeout(300_000);

const VK = 'vk_client_sdk_000001';
/** A Visa number that passes Luhn and is no payment provider's published test card. */
const CARD = '4539148803436467';

const mock = await startMockProvider();
t.teardown(() => mock.close());
const proxy = await startProxy(t, {
  upstreamUrl: mock.url,
  file: {
    keys: [{ key: VK, name: 'sdk' }],
    settings: { mcpAllowedServers: ['github'], piiDetectors: { 'pii.card': 'block' } },
    budget: { dailyUsd: 25, monthlyUsd: 300 },
  },
});

function client(t: Tap.Test, opts: Partial<ConstructorParameters<typeof SvcClient>[0]> = {}) {
  const c = new SvcClient({ apiKey: VK, baseUrl: proxy.url, env: {}, ...opts });
  t.teardown(() => c.close());
  const hijacks: HijackEvent[] = [];
  const kills: Verdict[] = [];
  c.on('hijack', (e) => hijacks.push(e));
  c.on('kill', (v) => kills.push(v));
  return { c, hijacks, kills };
}

const lastTrace = () => proxy.sink.recent().at(-1)!;
const ask = (text: string): OpenAIMessage[] => [{ role: 'user', content: text }];
const mcpTool = (name: string) => ({ tools: [{ type: 'function', function: { name, description: 'an MCP tool', parameters: { type: 'object', properties: {} } } }] });
const mockContent = (text: string) => ({ 'x-mock-content': encodeURIComponent(text) });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

t.test('chat: an answer, its trace id, the caller identity the proxy recorded and the budget headers', async (t) => {
  const { c, hijacks, kills } = client(t, { sessionId: 'sess-42', harness: 'nightly-review' });
  const result = await c.chat('gpt-4o-mini', [{ role: 'system', content: 'Be brief.' }, ...ask('hello')], { params: { temperature: 0 } });
  t.equal(result.text, 'Hello from the mock provider.');
  t.equal(result.enforcement, 'BYPASS');
  t.equal(result.finishReason, 'stop');
  t.ok(result.usage !== null && result.usage.inputTokens > 0);
  const trace = lastTrace();
  t.equal(result.traceId, trace.id, 'the trace id is the proxy trace');
  t.match(trace, { harness: 'nightly-review', session: 'sess-42', enforcement: 'BYPASS' });
  t.match(mock.requests.at(-1)!.body, { model: 'gpt-4o-mini', temperature: 0, stream: false }, 'params go upstream; stream is the client’s');
  t.match(result.budget, { source: 'proxy_headers', daily: { limitUsd: 25 }, monthly: { limitUsd: 300 } });
  t.same(hijacks, []);
  t.same(kills, []);
});

t.test('the caller headers the proxy understands: harness, session, workspace (open mode takes it from the header)', async (t) => {
  const open = await startProxy(t, { upstreamUrl: mock.url });
  const c = new SvcClient({ apiKey: 'sk-own-provider-key', baseUrl: open.url, env: { SVC_SESSION_ID: 'sess-env', SVC_WORKSPACE_ID: 'ws-env' } });
  t.teardown(() => c.close());
  await c.chat('gpt-4o-mini', ask('hi'));
  t.match(open.sink.recent().at(-1), { harness: 'svc-client', session: 'sess-env', workspace: 'ws-env' });
  const sent = mock.requests.at(-1)!.headers;
  t.notOk('x-session-id' in sent || 'x-workspace-id' in sent || 'x-svc-harness' in sent, 'the proxy keeps them to itself');
});

t.test('a steered request raises hijack with the trace id and the reason', async (t) => {
  const { c, hijacks, kills } = client(t);
  const result = await c.chat('gpt-4o-mini', ask('file an issue'), { params: mcpTool('mcp__gitlab__create_issue') });
  const trace = lastTrace();
  t.match(trace, { enforcement: 'HIJACK', toolCalls: [{ name: 'mcp__gitlab__create_issue', code: 'SERVER_NOT_ALLOWED', substituted: true }] });
  t.equal(hijacks.length, 1);
  t.equal(hijacks[0]!.traceId, trace.id);
  t.match(hijacks[0]!.reason, /^\[Svc Governance\] BLOCKED: SERVER_NOT_ALLOWED: the mcp__gitlab__create_issue tool call was blocked by rule mcpAllowedServers/);
  t.same(hijacks[0]!.notices, [hijacks[0]!.reason]);
  t.equal(result.enforcement, 'HIJACK');
  t.equal(result.hijack, hijacks[0]);
  t.same(result.toolCalls, [], 'the refused call is gone');
  t.same(kills, []);

  const allowed = await c.chat('gpt-4o-mini', ask('file an issue'), { params: mcpTool('mcp__github__create_issue') });
  t.equal(allowed.toolCalls.length, 1, 'an allowed call comes through');
  t.equal(allowed.toolCalls[0]!.function.name, 'mcp__github__create_issue');
  t.equal(hijacks.length, 1, 'and raises nothing');
});

t.test('a steered stream raises hijack once the notice that replaced the call has arrived', async (t) => {
  const { c, hijacks } = client(t);
  const result = await c.stream('gpt-4o-mini', ask('file an issue'), { params: mcpTool('mcp__gitlab__create_issue') }).final();
  const trace = lastTrace();
  t.match(trace, { enforcement: 'HIJACK', stream: true });
  t.equal(hijacks.length, 1);
  t.equal(hijacks[0]!.traceId, trace.id);
  t.match(hijacks[0]!.reason, /SERVER_NOT_ALLOWED: the mcp__gitlab__create_issue tool call was blocked/);
  t.equal(result.enforcement, 'HIJACK', 'the stream reports the steer its header could not know of');
  t.same(result.toolCalls, []);
});

t.test('a DLP block raises kill and chat throws the verdict error carrying the verdict', async (t) => {
  const { c, kills, hijacks } = client(t);
  const before = mock.requests.length;
  const err = await rejection(c.chat('gpt-4o-mini', ask(`charge card ${CARD} please`)));
  t.type(err, VerdictError);
  const verdict = (err as VerdictError).verdict;
  const trace = lastTrace();
  t.match(verdict, { enforcement: 'KILL', code: 'dlp_blocked', status: 403, traceId: trace.id, reason: /pii\.card/ });
  t.equal((err as VerdictError).code, 'policy_verdict');
  t.equal((err as VerdictError).gatewayCode, 'dlp_blocked');
  t.equal(trace.enforcement, 'KILL');
  t.same(kills, [verdict], 'the kill event carries the same verdict (trace id and reason)');
  t.same(hijacks, []);
  t.equal(mock.requests.length, before, 'nothing went upstream');
});

t.test('an answer the policy withheld is a kill too', async (t) => {
  const { c, kills } = client(t);
  const err = await rejection(c.chat('gpt-4o-mini', ask('what card is on file?'), { headers: mockContent(`The card is ${CARD}.`) }));
  t.type(err, VerdictError);
  t.match((err as VerdictError).verdict, { code: 'response_withheld', status: 200, traceId: lastTrace().id, reason: /withheld by policy: it contained pii\.card/ });
  t.equal(lastTrace().enforcement, 'KILL');
  t.equal(kills.length, 1);
});

t.test('streaming: chunks arrive as they come and add up to the final text', async (t) => {
  const { c, kills, hijacks } = client(t);
  const content = 'Streams arrive in several small pieces, one after another.';
  const stream = c.stream('gpt-4o-mini', ask('stream please'), { headers: { ...mockContent(content), 'x-mock-chunks': '6' } });
  const deltas: ChatDelta[] = [];
  for await (const delta of stream) deltas.push(delta);
  const texts = deltas.map((d) => d.text).filter((s) => s !== '');
  t.equal(texts.length, 6, 'six content chunks');
  t.equal(texts.join(''), content);
  const result = await stream.final();
  t.equal(result.text, content);
  t.equal(result.finishReason, 'stop');
  t.equal(result.traceId, lastTrace().id);
  t.ok(result.usage !== null && result.usage.outputTokens > 0, 'usage from the last chunk');
  t.match(result.budget, { daily: { limitUsd: 25 } });
  t.match(mock.requests.at(-1)!.body, { stream: true, stream_options: { include_usage: true } });
  t.same(kills, []);
  t.same(hijacks, []);

  const quick = await c.stream('gpt-4o-mini', ask('again')).final();
  t.equal(quick.text, 'Hello from the mock provider.', 'final() alone reads the stream');
  t.throws(() => {
    const s = c.stream('gpt-4o-mini', ask('x'));
    s[Symbol.asyncIterator]();
    s[Symbol.asyncIterator]();
  }, /read only once/);
});

t.test('streaming: tool calls are assembled from their pieces', async (t) => {
  const { c } = client(t);
  const result = await c.stream('gpt-4o-mini', ask('look'), { params: mcpTool('mcp__github__list_repos'), headers: { 'x-mock-tool-args': JSON.stringify({ org: 'acme', limit: 5 }) } }).final();
  t.equal(result.toolCalls.length, 1);
  t.equal(result.toolCalls[0]!.function.name, 'mcp__github__list_repos');
  t.same(JSON.parse(result.toolCalls[0]!.function.arguments), { org: 'acme', limit: 5 });
  t.equal(result.message.content, null);
  t.equal(result.finishReason, 'tool_calls');
});

t.test('a streaming refusal raises kill and throws, from the iteration and from final()', async (t) => {
  const { c, kills } = client(t);
  const stream = c.stream('gpt-4o-mini', ask(`my card is ${CARD}`));
  const err = await rejection(
    (async () => {
      for await (const _ of stream) t.fail('no chunk comes from a refused request');
    })(),
  );
  t.type(err, VerdictError);
  t.match((err as VerdictError).verdict, { code: 'dlp_blocked', traceId: lastTrace().id });
  t.equal(await rejection(stream.final()), err, 'final() throws the same error');
  t.equal(kills.length, 1);

  const withheld = await rejection(c.stream('gpt-4o-mini', ask('card?'), { headers: { ...mockContent(`Card ${CARD} is on file.`), 'x-mock-chunks': '4' } }).final());
  t.type(withheld, VerdictError, 'an answer withheld mid-stream throws at its end');
  t.match((withheld as VerdictError).verdict, { code: 'response_withheld', reason: /^\[svc: the rest of this response was withheld: it contained pii\.card\]$/ });
  t.equal(kills.length, 2);
  t.equal(lastTrace().enforcement, 'KILL');
});

t.test('other failures: a bad key is a rejected request, an unreachable proxy is named as such', async (t) => {
  const { c: wrongKey, kills } = client(t, { apiKey: 'vk_not_a_known_key_1' });
  const rejected = await rejection(wrongKey.chat('gpt-4o-mini', ask('hi')));
  t.type(rejected, RequestRejectedError);
  t.match(rejected, { code: 'request_rejected', status: 401, gatewayCode: 'invalid_api_key' });
  t.same(kills, [], 'not a policy verdict');

  const { c: nowhere } = client(t, { baseUrl: `http://127.0.0.1:${await freePort()}` });
  t.match(await rejection(nowhere.chat('gpt-4o-mini', ask('hi'))), { constructor: GatewayUnreachableError, code: 'gateway_unreachable' });
  t.match(await rejection(nowhere.stream('gpt-4o-mini', ask('hi')).final()), { code: 'gateway_unreachable' });

  const aborted = new AbortController();
  aborted.abort();
  const { c } = client(t);
  t.match(await rejection(c.chat('gpt-4o-mini', ask('hi'), { signal: aborted.signal })), { name: 'AbortError' }, "the caller's abort stays an abort");
});

t.test('a stream left early closes its connection; final() then says it was not read to its end', async (t) => {
  const { c } = client(t);
  const aborted = new Promise((resolve) => mock.events.once('aborted', resolve));
  const stream = c.stream('gpt-4o-mini', ask('long'), { headers: { 'x-mock-chunks': '200', 'x-mock-chunk-delay-ms': '25' } });
  for await (const delta of stream) {
    t.type(delta.raw, 'object');
    break;
  }
  await aborted;
  t.pass('the provider saw the request go away');
  t.match(await rejection(stream.final()), { message: /closed before its end/ });
});

t.test('a listener that throws does not change the outcome', async (t) => {
  const { c } = client(t);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const off = c.on('hijack', () => {
    throw new Error('listener bug');
  });
  const result = await c.chat('gpt-4o-mini', ask('file an issue'), { params: mcpTool('mcp__gitlab__create_issue') });
  t.equal(result.enforcement, 'HIJACK');
  off();
  await new Promise((resolve) => setImmediate(resolve));
  t.match(warnings, [/'hijack' listener threw: listener bug/]);
  t.throws(() => c.on('bogus' as never, () => undefined), { code: 'invalid_options' });
  t.throws(() => c.on('toString' as never, () => undefined), { code: 'invalid_options' }, 'not an inherited property either');
});
