import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider, type MockProviderOptions } from '../../bench/mock/provider.js';

const PROVIDER_PATH = fileURLToPath(new URL('../../bench/mock/provider.js', import.meta.url));
const DEFAULT_CONTENT = 'Hello from the mock provider.';

interface SseEvent {
  event?: string;
  data: string;
}

async function start(t: { teardown(fn: () => unknown): void }, opts?: MockProviderOptions): Promise<MockProvider> {
  const mock = await startMockProvider(opts);
  t.teardown(() => mock.close());
  return mock;
}

function post(mock: MockProvider, path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(mock.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event.event = line.slice('event: '.length);
        if (line.startsWith('data: ')) event.data = line.slice('data: '.length);
      }
      return event;
    });
}

async function readSse(res: Response): Promise<SseEvent[]> {
  return parseSse(await res.text());
}

/** JSON payloads of a `data:`-only (OpenAI) stream, without the final [DONE]. */
function openaiChunks(events: SseEvent[]): any[] {
  return events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
}

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'What is in the README?' }],
  ...extra,
});

const openaiTools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const anthropicTools = [{ name: 'read_file', input_schema: { type: 'object' } }];

t.test('chat completion: shape, usage and request recording', async (t) => {
  const mock = await start(t);
  const seen: unknown[] = [];
  mock.events.on('request', (request) => seen.push(request.path));
  const finished = once(mock.events, 'finished');

  const res = await post(mock, '/openai/deployments/gpt4/chat/completions?api-version=2024-10-21', chatBody(), {
    'x-custom': 'yes',
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  const body = await res.json();
  t.match(body, {
    id: /^chatcmpl-/,
    object: 'chat.completion',
    created: Number,
    model: 'gpt-4o',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: DEFAULT_CONTENT, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
  });
  // 'What is in the README?' is 22 chars -> 6 tokens; the reply is 29 chars -> 8 tokens.
  t.same(body.usage, { prompt_tokens: 6, completion_tokens: 8, total_tokens: 14 });
  t.same((await finished)[0], { path: '/openai/deployments/gpt4/chat/completions', route: 'chat', status: 200 });

  t.equal(mock.requests.length, 1);
  t.match(mock.requests[0], {
    method: 'POST',
    path: '/openai/deployments/gpt4/chat/completions',
    query: { 'api-version': '2024-10-21' },
    headers: { 'x-custom': 'yes', 'content-type': 'application/json' },
    body: chatBody(),
    route: 'chat',
  });
  t.same(seen, ['/openai/deployments/gpt4/chat/completions']);
  t.equal(mock.counts.chat, 1);

  mock.reset();
  t.equal(mock.requests.length, 0);
  t.equal(mock.counts.chat, 0);
});

t.test('chat stream: configured chunks, usage chunk, [DONE]', async (t) => {
  const mock = await start(t);
  const res = await post(mock, '/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } }), {
    'x-mock-chunks': '4',
  });
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  t.equal(res.headers.get('cache-control'), 'no-cache');
  const events = await readSse(res);
  t.equal(events.at(-1)?.data, '[DONE]');
  const chunks = openaiChunks(events);
  t.match(chunks[0], { object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] });
  const contentDeltas = chunks.filter((c) => c.choices[0]?.delta.content);
  t.equal(contentDeltas.length, 4);
  t.equal(contentDeltas.map((c) => c.choices[0].delta.content).join(''), DEFAULT_CONTENT);
  t.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  t.same(chunks.at(-1).choices, []);
  t.same(chunks.at(-1).usage, { prompt_tokens: 6, completion_tokens: 8, total_tokens: 14 });
  t.ok(
    chunks.slice(0, -1).every((c) => Object.hasOwn(c, 'usage') && c.usage === null),
    'as OpenAI does, every other chunk carries a null usage',
  );
});

t.test('chat stream: more chunks than content uses filler, explicit content is not padded', async (t) => {
  const mock = await start(t);
  const filler = openaiChunks(await readSse(await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-chunks': '50' })));
  const fillerDeltas = filler.filter((c) => c.choices[0]?.delta.content);
  t.equal(fillerDeltas.length, 50);
  t.ok(fillerDeltas.every((c) => c.choices[0].delta.content === 'lorem '));
  t.notOk(filler.some((c) => Object.hasOwn(c, 'usage')), 'no usage without stream_options.include_usage');

  const short = openaiChunks(
    await readSse(await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-chunks': '5', 'x-mock-content': 'h%C3%A9y' })),
  );
  t.same(
    short.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0].delta.content),
    ['h', 'é', 'y'],
  );
});

t.test('OpenAI tool calls', async (t) => {
  const mock = await start(t);
  const body = await (await post(mock, '/v1/chat/completions', chatBody({ tools: openaiTools }))).json();
  t.match(body.choices[0], {
    finish_reason: 'tool_calls',
    message: { content: null, tool_calls: [{ id: /^call_/, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }] },
  });

  const chunks = openaiChunks(
    await readSse(await post(mock, '/v1/chat/completions', chatBody({ tools: openaiTools, stream: true }), { 'x-mock-tool-args': '{"path":"src/index.ts"}' })),
  );
  const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  t.match(calls[0], { index: 0, id: /^call_/, type: 'function', function: { name: 'read_file' } });
  const argumentDeltas = calls.map((c) => c.function.arguments).filter(Boolean);
  t.ok(argumentDeltas.length >= 3, 'arguments arrive in at least 3 deltas');
  t.equal(argumentDeltas.join(''), '{"path":"src/index.ts"}');
  t.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');

  const answered = chatBody({
    tools: openaiTools,
    messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
    ],
  });
  const after = await (await post(mock, '/v1/chat/completions', answered)).json();
  t.equal(after.choices[0].message.content, DEFAULT_CONTENT, 'answers in text after a tool result');
});

t.test('Anthropic messages: text, stream and tool use', async (t) => {
  const mock = await start(t);
  const request = { model: 'claude-test', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there' }] };

  const message = await (await post(mock, '/v1/messages', request)).json();
  t.match(message, {
    id: /^msg_/,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [{ type: 'text', text: DEFAULT_CONTENT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 8 },
  });

  const events = await readSse(await post(mock, '/v1/messages', { ...request, stream: true }, { 'x-mock-chunks': '3' }));
  t.same(
    events.map((e) => e.event),
    ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
  );
  for (const e of events) t.equal(JSON.parse(e.data).type, e.event);
  t.match(JSON.parse(events[0]!.data).message, { content: [], usage: { input_tokens: 5, output_tokens: 1 } });
  t.match(JSON.parse(events.at(-2)!.data), { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 8 } });

  const toolEvents = await readSse(await post(mock, '/anthropic/v1/messages', { ...request, tools: anthropicTools, stream: true }));
  const toolData = toolEvents.map((e) => JSON.parse(e.data));
  t.match(toolData[1], { type: 'content_block_start', content_block: { type: 'tool_use', id: /^toolu_/, name: 'read_file', input: {} } });
  const partials = toolData.filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json);
  t.ok(partials.length >= 3, 'input arrives in at least 3 input_json_delta events');
  t.equal(partials.join(''), '{"path":"README.md"}');
  t.ok(toolData.some((d) => d.type === 'content_block_stop'));
  t.equal(toolData.find((d) => d.type === 'message_delta').delta.stop_reason, 'tool_use');

  const toolMessage = await (await post(mock, '/v1/messages', { ...request, tools: anthropicTools }, { 'x-mock-tool-args': '{"path":"a.txt"}' })).json();
  t.match(toolMessage, { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: /^toolu_/, name: 'read_file', input: { path: 'a.txt' } }] });
  const viaBody = await (await post(mock, '/v1/messages', { tools: anthropicTools, mock: { 'tool-args': { path: 'b.txt' } } })).json();
  t.match(viaBody.content, [{ type: 'tool_use', input: { path: 'b.txt' } }], 'tool-args in the body may be an object');
  const numbered = async () => (await (await post(mock, '/v1/messages', { ...request, tools: anthropicTools }, { 'x-mock-tool-args': '{"path":"{serial}/{serial}.txt"}' })).json()).content[0].input.path;
  const [first, second] = [await numbered(), await numbered()];
  t.match(first, /^(\d+)\/(\d+)\.txt$/, 'each {serial} becomes a number');
  const [a, b] = first.split(/[/.]/).map(Number);
  t.equal(b, a + 1, 'counted up');
  t.equal(second, `${b + 1}/${b + 2}.txt`, 'and on from one call to the next');

  const answered = {
    ...request,
    tools: anthropicTools,
    messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file text' }] },
    ],
  };
  const after = await (await post(mock, '/v1/messages', answered)).json();
  t.equal(after.content[0].type, 'text', 'answers in text after a tool result');
});

t.test('Responses API: text and function calls', async (t) => {
  const mock = await start(t);
  const response = await (await post(mock, '/v1/responses', { model: 'gpt-4o', input: 'Say hi' })).json();
  t.match(response, {
    id: /^resp_/,
    object: 'response',
    status: 'completed',
    model: 'gpt-4o',
    output: [{ type: 'message', id: /^msg_/, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: DEFAULT_CONTENT, annotations: [] }] }],
    usage: { input_tokens: 2, output_tokens: 8, total_tokens: 10 },
  });

  const events = await readSse(await post(mock, '/v1/responses', { model: 'gpt-4o', input: 'Say hi', stream: true }, { 'x-mock-chunks': '2' }));
  t.same(
    events.map((e) => e.event),
    [
      'response.created',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  const data = events.map((e) => JSON.parse(e.data));
  t.same(data.map((d) => d.sequence_number), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  t.match(data[0].response, { status: 'in_progress', output: [] });
  t.match(data[3], { type: 'response.output_text.delta', item_id: /^msg_/, output_index: 0, content_index: 0, delta: String });

  const tools = [{ type: 'function', name: 'read_file', parameters: { type: 'object' } }];
  const call = await (await post(mock, '/v1/responses', { model: 'gpt-4o', input: [{ role: 'user', content: 'read' }], tools })).json();
  t.match(call.output, [{ type: 'function_call', id: /^fc_/, call_id: /^call_/, name: 'read_file', arguments: '{"path":"README.md"}', status: 'completed' }]);

  const callEvents = (await readSse(await post(mock, '/v1/responses', { model: 'gpt-4o', input: 'read', tools, stream: true }))).map((e) => JSON.parse(e.data));
  const argumentDeltas = callEvents.filter((d) => d.type === 'response.function_call_arguments.delta');
  t.ok(argumentDeltas.length >= 3);
  t.equal(argumentDeltas.map((d) => d.delta).join(''), '{"path":"README.md"}');

  const answered = { model: 'gpt-4o', tools, input: [{ type: 'function_call_output', call_id: 'call_1', output: 'file text' }] };
  t.equal((await (await post(mock, '/v1/responses', answered)).json()).output[0].type, 'message');
});

t.test('a script plays a conversation: a tool call, then the final text once the result is back', async (t) => {
  const mock = await start(t, {
    script: { steps: [{ tool: { name: 'Bash', input: { command: 'touch made.txt' } } }, { text: 'Created made.txt.' }] },
  });
  const first = { model: 'claude-sonnet-4-5', max_tokens: 64, tools: anthropicTools, messages: [{ role: 'user', content: 'make a file' }] };
  const call = await (await post(mock, '/v1/messages', first)).json();
  t.match(call, { stop_reason: 'tool_use', content: [{ type: 'tool_use', name: 'Bash', input: { command: 'touch made.txt' } }] });
  t.match(await (await post(mock, '/v1/messages', first)).json(), { stop_reason: 'tool_use' }, 'a retry of the same turn gets the same step');
  const noTools = await (await post(mock, '/v1/messages', { ...first, tools: undefined })).json();
  t.match(noTools.content, [{ type: 'text', text: 'Created made.txt.' }], 'a side request offering no tools gets the text');
  const answered = {
    ...first,
    messages: [
      ...first.messages,
      { role: 'assistant', content: call.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.content[0].id, content: '' }] },
    ],
  };
  const events = await readSse(await post(mock, '/v1/messages', { ...answered, stream: true }));
  const text = events.map((e) => JSON.parse(e.data)).filter((d) => d.delta?.type === 'text_delta').map((d) => d.delta.text).join('');
  t.equal(text, 'Created made.txt.');

  mock.setScript({ steps: [{ tool: { name: 'exec', input: 'await tools.exec_command({cmd: "touch made.txt"})' } }, { text: 'done' }] });
  const codeMode = { model: 'gpt-5', stream: true, input: [{ type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [] }] }, { role: 'user', content: 'go' }] };
  const streamed = (await readSse(await post(mock, '/v1/responses', codeMode))).map((e) => JSON.parse(e.data));
  t.same(
    streamed.map((d) => d.type),
    ['response.created', 'response.output_item.added', ...streamed.filter((d) => d.type.endsWith('input.delta')).map(() => 'response.custom_tool_call_input.delta'), 'response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed'],
  );
  const done = streamed.find((d) => d.type === 'response.output_item.done');
  t.match(done.item, { type: 'custom_tool_call', id: /^ctc_/, call_id: /^call_/, name: 'exec', input: 'await tools.exec_command({cmd: "touch made.txt"})' });
  const afterCall = { ...codeMode, stream: false, input: [...codeMode.input, done.item, { type: 'custom_tool_call_output', call_id: done.item.call_id, output: 'ok' }] };
  t.match((await (await post(mock, '/v1/responses', afterCall)).json()).output, [{ type: 'message', content: [{ text: 'done' }] }]);

  mock.setScript({ steps: [{ tool: { name: 'read_file', input: { path: 'a' } } }, { text: 'read it' }] });
  const chat = await (await post(mock, '/v1/chat/completions', chatBody({ tools: openaiTools }))).json();
  t.match(chat.choices[0].message.tool_calls, [{ function: { name: 'read_file', arguments: '{"path":"a"}' } }]);
  mock.setScript(null);
  t.match((await (await post(mock, '/v1/chat/completions', chatBody({ tools: openaiTools }))).json()).choices[0].message.tool_calls, [{ function: { arguments: '{"path":"README.md"}' } }], 'without a script, the controls answer again');
});

t.test('x-mock-finish-in-last-delta: the last content delta carries finish_reason', async (t) => {
  const mock = await start(t);
  const chunks = openaiChunks(await readSse(await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-finish-in-last-delta': '1', 'x-mock-chunks': '3' })));
  const last = chunks.at(-1);
  t.equal(last.choices[0].finish_reason, 'stop');
  t.ok(last.choices[0].delta.content.length > 0, 'with text in it');
  t.equal(chunks.filter((c) => c.choices[0]?.finish_reason).length, 1);
});

t.test('completions, embeddings, count_tokens and models', async (t) => {
  const mock = await start(t);
  const completion = await (await post(mock, '/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Once upon' })).json();
  t.match(completion, {
    id: /^cmpl-/,
    object: 'text_completion',
    model: 'gpt-3.5-turbo-instruct',
    choices: [{ text: DEFAULT_CONTENT, index: 0, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 },
  });
  const chunks = openaiChunks(
    await readSse(await post(mock, '/v1/completions', { prompt: 'Once upon', stream: true, stream_options: { include_usage: true } })),
  );
  t.equal(chunks.slice(0, -2).map((c) => c.choices[0].text).join(''), DEFAULT_CONTENT);
  t.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  t.match(chunks.at(-1), { choices: [], usage: { completion_tokens: 8 } });

  const embeddings = await (await post(mock, '/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'bb'] })).json();
  t.match(embeddings, { object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: 1, total_tokens: 1 } });
  t.same(embeddings.data.map((d: any) => [d.object, d.index, d.embedding.length]), [['embedding', 0, 8], ['embedding', 1, 8]]);
  const single = await (await post(mock, '/v1/embeddings', { input: 'one', stream: true })).json();
  t.equal(single.data.length, 1, 'a string input is one embedding; stream is ignored');

  t.same(await (await post(mock, '/v1/messages/count_tokens', { model: 'claude', messages: [{ role: 'user', content: 'abcdefgh' }] })).json(), { input_tokens: 2 });

  const models = await (await fetch(`${mock.url}/v1/models`)).json();
  t.equal(models.object, 'list');
  t.ok(models.data.length > 0);
  t.match(models.data[0], { id: String, object: 'model', created: Number, owned_by: String });

  const notFound = await fetch(`${mock.url}/v1/unknown`);
  t.equal(notFound.status, 404);
  t.match(await notFound.json(), { error: { type: 'invalid_request_error', message: /GET \/v1\/unknown/ } });
  t.equal((await fetch(`${mock.url}/v1/chat/completions`)).status, 404, 'wrong method');
  t.equal(mock.counts.not_found, 2);
});

t.test('official SDKs parse the mock', async (t) => {
  const mock = await start(t, { requireKey: 'sk-test' });
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: mock.url, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'Hello there' }];

  const completion = await openai.chat.completions.create({ model: 'gpt-4o', messages });
  t.equal(completion.choices[0]?.message.content, DEFAULT_CONTENT);

  const chatStream = openai.chat.completions.stream({ model: 'gpt-4o', messages, stream_options: { include_usage: true } });
  const streamed = await chatStream.finalChatCompletion();
  t.equal(streamed.choices[0]?.message.content, DEFAULT_CONTENT);
  t.equal(streamed.usage?.completion_tokens, 8);

  const toolStream = openai.chat.completions.stream({
    model: 'gpt-4o',
    messages,
    tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
  });
  const toolCompletion = await toolStream.finalChatCompletion();
  const toolCall = toolCompletion.choices[0]?.message.tool_calls?.[0];
  t.equal(toolCall?.type === 'function' ? toolCall.function.arguments : undefined, '{"path":"README.md"}');

  const response = await openai.responses.create({ model: 'gpt-4o', input: 'Hello' });
  t.equal(response.output_text, DEFAULT_CONTENT);
  const streamedResponse = await openai.responses.stream({ model: 'gpt-4o', input: 'Hello' }).finalResponse();
  t.match(streamedResponse.output, [{ type: 'message', content: [{ type: 'output_text', text: DEFAULT_CONTENT }] }]);

  const embedding = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
  t.equal(embedding.data[0]?.embedding.length, 8, 'base64 embeddings decode');

  const legacy = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' });
  t.equal(legacy.choices[0]?.text, DEFAULT_CONTENT);

  const models = await openai.models.list();
  t.ok(models.data.length > 0);

  const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 100, messages });
  t.same(message.content, [{ type: 'text', text: DEFAULT_CONTENT }]);
  const final = await anthropic.messages.stream({ model: 'claude-test', max_tokens: 100, messages }).finalMessage();
  t.same(final.content, [{ type: 'text', text: DEFAULT_CONTENT }]);
  t.equal(final.usage.output_tokens, 8);
  const tools = [{ name: 'read_file', input_schema: { type: 'object' as const } }];
  const toolMessage = await anthropic.messages.stream({ model: 'claude-test', max_tokens: 100, messages, tools }).finalMessage();
  t.match(toolMessage.content, [{ type: 'tool_use', name: 'read_file', input: { path: 'README.md' } }]);
  t.same(await anthropic.messages.countTokens({ model: 'claude-test', messages }), { input_tokens: 3 });

  const badKey = new OpenAI({ apiKey: 'wrong', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  const denied = await badKey.chat.completions.create({ model: 'gpt-4o', messages }).catch((error: unknown) => error);
  t.match(denied, { status: 401, code: 'invalid_api_key' });
  const limited = await openai.chat.completions
    .create({ model: 'gpt-4o', messages }, { headers: { 'x-mock-status': '429', 'x-mock-retry-after': '0.05' } })
    .catch((error: unknown) => error);
  t.match(limited, { status: 429, code: 'rate_limit_exceeded' });
  const streamError = await (async () => {
    for await (const event of await anthropic.messages.create({ model: 'claude-test', max_tokens: 100, messages, stream: true }, { headers: { 'x-mock-stream-error': '1' } })) {
      t.fail(`unexpected event ${event.type}`);
    }
  })().catch((error: unknown) => error);
  t.match(streamError, { error: { type: 'error', error: { type: 'overloaded_error' } } });
});

t.test('x-mock-status: error shapes and retry-after', async (t) => {
  const mock = await start(t);
  const limited = await post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-status': '429' });
  t.equal(limited.status, 429);
  t.equal(limited.headers.get('retry-after'), '1');
  t.same(await limited.json(), { error: { message: 'mock error 429', type: 'requests', code: 'rate_limit_exceeded', param: null } });

  const custom = await post(mock, '/v1/messages', { mock: { status: 429, 'retry-after': 0.05 } });
  t.equal(custom.headers.get('retry-after'), '0.05');
  t.same(await custom.json(), { type: 'error', error: { type: 'rate_limit_error', message: 'mock error 429' } });

  const shapes: Array<[path: string, status: number, error: object]> = [
    ['/v1/chat/completions', 500, { type: 'server_error', code: 'server_error' }],
    ['/v1/chat/completions', 400, { type: 'invalid_request_error', code: null }],
    ['/v1/messages', 529, { type: 'overloaded_error' }],
    ['/v1/messages', 503, { type: 'api_error' }],
    ['/v1/messages/count_tokens', 400, { type: 'invalid_request_error' }],
  ];
  for (const [path, status, error] of shapes) {
    const res = await post(mock, path, {}, { 'x-mock-status': String(status) });
    t.equal(res.status, status);
    t.equal(res.headers.get('retry-after'), null);
    t.match(await res.json(), { error }, `${path} ${status}`);
  }
});

t.test('x-mock-fail-times: only the first N requests with a key fail', async (t) => {
  const mock = await start(t);
  const headers = { 'x-mock-status': '503', 'x-mock-key': 'retry-test', 'x-mock-fail-times': '1' };
  t.equal((await post(mock, '/v1/chat/completions', chatBody(), headers)).status, 503);
  t.equal((await post(mock, '/v1/chat/completions', chatBody(), headers)).status, 200);
  t.equal((await post(mock, '/v1/chat/completions', chatBody(), { ...headers, 'x-mock-key': 'other' })).status, 503);

  const viaBody = chatBody({ mock: { status: 500, key: 'body-key', 'fail-times': 2 } });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await post(mock, '/v1/chat/completions', viaBody)).status);
  t.same(statuses, [500, 500, 200]);

  mock.reset();
  t.equal((await post(mock, '/v1/chat/completions', chatBody(), headers)).status, 503, 'reset() forgets keys');
});

t.test('x-mock-reset', async (t) => {
  const mock = await start(t);
  const aborted: unknown[] = [];
  mock.events.on('aborted', (event) => aborted.push(event));

  await t.rejects(post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-reset': 'before' }), 'before: no response at all');

  const truncated = await post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-reset': 'mid' });
  t.equal(truncated.status, 200);
  await t.rejects(truncated.text(), 'mid: the JSON body breaks off');

  const stream = await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-reset': 'mid', 'x-mock-chunks': '10' });
  t.equal(stream.status, 200);
  const reader = stream.body!.getReader();
  let received = '';
  await t.rejects(
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        received += Buffer.from(value).toString();
      }
    })(),
    'mid: the stream breaks off',
  );
  const contentDeltas = openaiChunks(parseSse(received)).filter((c) => c.choices[0]?.delta.content);
  t.equal(contentDeltas.length, 5, 'about half of the chunks arrived');
  t.notOk(received.includes('[DONE]'));

  const resetOnce = chatBody({ mock: { reset: 'before', key: 'k', 'fail-times': 1 } });
  await t.rejects(post(mock, '/v1/chat/completions', resetOnce), 'the first request with the key is reset');
  t.equal((await post(mock, '/v1/chat/completions', resetOnce)).status, 200, 'the second one is answered');
  t.same(aborted, [], 'resets by the mock are not client aborts');
});

t.test('x-mock-stream-error', async (t) => {
  const mock = await start(t);
  const openaiRes = await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-stream-error': '1' });
  t.equal(openaiRes.status, 200);
  t.equal(openaiRes.headers.get('content-type'), 'text/event-stream');
  t.same(await openaiRes.text(), 'data: {"error":{"message":"mock stream error","type":"server_error","code":"server_error","param":null}}\n\n');

  const anthropicRes = await post(mock, '/v1/messages', { stream: true, mock: { 'stream-error': true } });
  t.same(await anthropicRes.text(), 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"mock stream error"}}\n\n');

  const notStreamed = await post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-stream-error': '1' });
  t.equal((await notStreamed.json()).object, 'chat.completion', 'ignored without stream: true');
});

t.test('aborted event when the client goes away mid-stream', async (t) => {
  const mock = await start(t);
  const controller = new AbortController();
  const aborted = once(mock.events, 'aborted');
  const res = await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-chunk-delay-ms': '50', 'x-mock-chunks': '20' }, controller.signal);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.match(Buffer.from(first.value!).toString(), /^data: /);
  controller.abort();
  t.same((await aborted)[0], { path: '/v1/chat/completions', route: 'chat' });
  t.equal(mock.counts.aborted, 1);
});

t.test('slow drip and delays', async (t) => {
  const mock = await start(t);
  let started = Date.now();
  const delayed = await post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-delay-ms': '100' });
  t.ok(Date.now() - started >= 95, 'headers wait for x-mock-delay-ms');
  t.equal(delayed.status, 200);

  const delay = 40;
  const dripping = await post(mock, '/v1/messages', { stream: true }, { 'x-mock-chunk-delay-ms': String(delay), 'x-mock-chunks': '2' });
  const reader = dripping.body!.getReader();
  const arrivals: number[] = [];
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
    arrivals.push(Date.now());
  }
  const ended = Date.now();
  t.equal(parseSse(text).length, 8);
  const spread = arrivals.at(-1)! - arrivals[0]!;
  t.ok(spread >= 7 * delay - 5, `the 8 events are ${delay} ms apart (${spread} ms from first to last)`);
  t.ok(ended - arrivals.at(-1)! < delay / 2, 'the stream ends right after its last event');
});

t.test('x-mock-stream-bytes: long stream under backpressure', async (t) => {
  const mock = await start(t);
  const total = 8 * 1024 * 1024;
  const res = await post(mock, '/v1/chat/completions', chatBody({ stream: true }), { 'x-mock-stream-bytes': String(total) });
  const reader = res.body!.getReader();
  await new Promise((resolve) => setTimeout(resolve, 200)); // let the socket fill up first
  let bytes = 0;
  let tail = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    tail = (tail + Buffer.from(value).toString()).slice(-20);
  }
  t.ok(bytes >= total && bytes < total * 1.05, `about ${total} bytes (${bytes})`);
  t.equal(tail.endsWith('data: [DONE]\n\n'), true);

  const long = await readSse(await post(mock, '/v1/responses', { stream: true }, { 'x-mock-stream-bytes': '40000' }));
  t.equal(long.filter((e) => e.event === 'response.output_text.delta').length, 3);
  t.equal(JSON.parse(long.at(-1)!.data).response.usage.output_tokens, (3 * 16384) / 4);
});

t.test('x-mock-no-usage', async (t) => {
  const mock = await start(t);
  const headers = { 'x-mock-no-usage': '1' };
  t.notOk('usage' in (await (await post(mock, '/v1/chat/completions', chatBody(), headers)).json()));
  const chunks = openaiChunks(await readSse(await post(mock, '/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } }), headers)));
  t.notOk(chunks.some((c) => 'usage' in c));
  const events = (await readSse(await post(mock, '/v1/messages', { stream: true }, headers))).map((e) => JSON.parse(e.data));
  t.notOk(events[0].message.usage);
  t.notOk(events.find((d) => d.type === 'message_delta').usage);
  const response = await (await post(mock, '/v1/responses', { input: 'x', mock: { 'no-usage': true } })).json();
  t.notOk('usage' in response);
});

t.test('requireKey', async (t) => {
  const mock = await start(t, { requireKey: 'secret' });
  const openaiDenied = await post(mock, '/v1/chat/completions', chatBody(), { authorization: 'Bearer nope' });
  t.equal(openaiDenied.status, 401);
  t.match(await openaiDenied.json(), { error: { type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
  const anthropicDenied = await post(mock, '/v1/messages', {});
  t.equal(anthropicDenied.status, 401);
  t.match(await anthropicDenied.json(), { type: 'error', error: { type: 'authentication_error' } });

  const accepted: Record<string, string>[] = [{ authorization: 'Bearer secret' }, { 'x-api-key': 'secret' }, { 'api-key': 'secret' }];
  for (const header of accepted) {
    t.equal((await post(mock, '/v1/chat/completions', chatBody(), header)).status, 200, Object.keys(header).join());
  }
});

t.test('request log: ring of 500, raw and empty bodies, repeated headers', async (t) => {
  const mock = await start(t);
  for (let i = 0; i < 501; i++) await (await post(mock, '/v1/embeddings', { input: String(i) })).arrayBuffer();
  t.equal(mock.requests.length, 500);
  t.same(mock.requests[0]!.body, { input: '1' });
  t.equal(mock.counts.embeddings, 501);

  await (await fetch(`${mock.url}/v1/embeddings`, { method: 'POST', body: 'not json' })).arrayBuffer();
  t.equal(mock.requests.at(-1)!.body, 'not json');
  await (await fetch(`${mock.url}/v1/models`)).arrayBuffer();
  t.equal(mock.requests.at(-1)!.body, null);

  await new Promise<void>((resolve, reject) => {
    http
      .get(`${mock.url}/v1/models`, { headers: { 'x-twice': ['a', 'b'] } }, (res) => res.resume().on('end', resolve))
      .on('error', reject);
  });
  t.equal(mock.requests.at(-1)!.headers['x-twice'], 'a, b');

  const big = 'x'.repeat(300_000);
  await (await post(mock, '/v1/embeddings', { input: big })).arrayBuffer();
  t.equal((mock.requests.at(-1)!.body as { input: string }).input, big, 'a body in many chunks arrives whole');
});

t.test('close() ends in-flight requests and is idempotent', async (t) => {
  const mock = await startMockProvider();
  const aborted: unknown[] = [];
  mock.events.on('aborted', (event) => aborted.push(event));
  const pending = post(mock, '/v1/chat/completions', chatBody(), { 'x-mock-delay-ms': '60000' });
  await once(mock.events, 'request');
  await mock.close();
  await t.rejects(pending);
  await mock.close();
  t.same(aborted, [], 'closing is not a client abort');
});

t.test('listening on a taken port fails', async (t) => {
  const mock = await start(t);
  await t.rejects(startMockProvider({ port: mock.port }), /could not listen/);
});

t.test('CLI prints its URL and stops on SIGTERM', async (t) => {
  const child = spawn(process.execPath, [PROVIDER_PATH, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const match = /^mock provider listening on (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(line.toString());
  t.ok(match, line.toString());
  const models = await (await fetch(`${match![1]}/v1/models`)).json();
  t.equal(models.object, 'list');
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.same(await exited, [0, null]);
});
