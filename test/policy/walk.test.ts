import t from 'tap';
import { describePath, messageIndexOf, setText, walkTexts, type TextLeaf } from '../../src/policy/walk.js';

const leaves = (body: unknown): TextLeaf[] => {
  const out: TextLeaf[] = [];
  // A leaf's path is the walk's own: kept, it is copied.
  walkTexts(body, (l) => out.push({ ...l, path: [...l.path] }));
  return out;
};

t.test('OpenAI chat: every role, tool-call arguments, tool results, tool descriptions and schemas', async (t) => {
  const body = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'be terse' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
    ],
    tools: [{ type: 'function', function: { name: 'read', description: 'Reads a file', parameters: { type: 'object' } } }],
  };
  const got = leaves(body).map((l) => [describePath(l.path), l.kind, l.text]);
  t.same(got, [
    ['messages[0].content', 'system', 'be terse'],
    ['messages[1].content[0].text', 'message', 'hello'],
    ['messages[2].tool_calls[0].function.arguments', 'tool_arguments', '{"path":"a"}'],
    ['messages[3].content', 'tool_result', 'file text'],
    ['tools[0].function.description', 'tool_description', 'Reads a file'],
    ['tools[0].function.parameters.type', 'other', 'object'],
  ]);
});

t.test('Anthropic: system, text blocks, tool_use input values, tool_result blocks', async (t) => {
  const body = {
    model: 'claude-sonnet-4',
    system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls -la' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'out' }] }] },
    ],
    tools: [{ name: 'bash', description: 'Runs a command', input_schema: { type: 'object' } }],
  };
  t.same(
    leaves(body).map((l) => [describePath(l.path), l.kind]),
    [
      ['system[0].text', 'system'],
      ['messages[0].content[0].input.command', 'tool_arguments'],
      ['messages[1].content[0].content[0].text', 'tool_result'],
      ['tools[0].description', 'tool_description'],
      ['tools[0].input_schema.type', 'other'],
    ],
  );
});

t.test('Responses API: instructions, input items and function_call_output', async (t) => {
  const body = {
    instructions: 'be kind',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'function_call_output', call_id: 'c', output: 'result' },
    ],
  };
  const got = leaves(body);
  t.same(got.map((l) => l.kind), ['system', 'message', 'tool_result']);
  t.equal(messageIndexOf(got[2]!.path), 1);
});

t.test('tool descriptions nested in namespaces, additional_tools items and functionDeclarations', async (t) => {
  const body = {
    input: [{ type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', description: 'ns', tools: [{ type: 'custom', name: 'exec', description: 'Run JS' }] }] }],
    tools: [{ functionDeclarations: [{ name: 'glob', description: 'Finds files' }] }],
  };
  t.same(
    leaves(body).map((l) => [describePath(l.path), l.kind]),
    [
      ['input[0].tools[0].description', 'tool_description'],
      ['input[0].tools[0].tools[0].description', 'tool_description'],
      ['tools[0].functionDeclarations[0].description', 'tool_description'],
    ],
  );
  const call = { input: [{ type: 'function_call', call_id: 'c', name: 'mk', arguments: '{}', item: { tools: [{ description: 'an argument' }] } }] };
  t.not(leaves(call).find((l) => l.text === 'an argument')?.kind, 'tool_description', 'a "tools" key elsewhere is not a tool list');
});

t.test('setText rewrites exactly the leaf', async (t) => {
  const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] };
  setText(body, ['messages', 0, 'content', 0, 'text'], 'b');
  t.same(body, { messages: [{ role: 'user', content: [{ type: 'text', text: 'b' }] }] });
});

t.test('every value is read: only structural fields of the wire format are skipped, by position', async (t) => {
  const body = {
    model: 'claude-sonnet-4',
    metadata: { user_id: 'u-1' },
    messages: [
      { role: 'user', name: 'jane', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc text' } }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: { url: 'https://x/?q=1', data: 'd', name: 'n', id: 'i', type: 't', status: 's', user: 'u' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo' } }] },
    ],
  };
  const got = leaves(body).map((l) => describePath(l.path));
  t.same(got, [
    'metadata.user_id',
    'messages[0].name',
    'messages[0].content[0].source.media_type',
    'messages[0].content[0].source.data',
    'messages[1].content[0].input.url',
    'messages[1].content[0].input.data',
    'messages[1].content[0].input.name',
    'messages[1].content[0].input.id',
    'messages[1].content[0].input.type',
    'messages[1].content[0].input.status',
    'messages[1].content[0].input.user',
    'messages[2].content[0].content',
    'messages[3].content[0].source.media_type',
  ], 'ids, roles, block types, tool names, the model and base64 payloads are the only fields left out');
});

t.test('numbers long enough to be a card or an account number are read as their digits', async (t) => {
  const body = { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'pay', input: { cc: 4539148803436467, qty: 3, ts: 1732300000 } }] }] };
  const got = leaves(body);
  t.same(got.map((l) => [describePath(l.path), l.text, l.numeric]), [['messages[0].content[0].input.cc', '4539148803436467', true]]);
  setText(body, got[0]!.path, '[REDACTED:pii.card]');
  t.same(body.messages[0]!.content[0]!.input, { cc: '[REDACTED:pii.card]', qty: 3, ts: 1732300000 }, 'a redacted number becomes a string: the JSON stays valid');
});

t.test('what a leaf is depends only on the objects above it: a message after a tool result, a system message or a tool call reads as a message', async (t) => {
  const body = {
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'bash', input: { command: 'ls' } }, { type: 'text', text: 'a1' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }, { type: 'text', text: 'u2' }] },
      { role: 'tool', tool_call_id: 'c', content: 'r2' },
      { role: 'user', content: 'u3' },
    ],
    input: [{ type: 'additional_tools', tools: [{ name: 'x', description: 'd' }] }, { role: 'user', description: 'not a tool' }],
  };
  t.same(
    leaves(body).map((l) => [l.text, l.kind]),
    [
      ['s', 'system'],
      ['u1', 'message'],
      ['ls', 'tool_arguments'],
      ['a1', 'message'],
      ['r', 'tool_result'],
      ['u2', 'message'],
      ['r2', 'tool_result'],
      ['u3', 'message'],
      ['d', 'tool_description'],
      ['not a tool', 'message'],
    ],
  );
});

t.test("only an object's own keys are read: one it inherits is not its text", async (t) => {
  const body = Object.assign(Object.create({ inherited: 'not in the body' }) as Record<string, unknown>, { messages: [{ role: 'user', content: 'hi' }] });
  t.same(leaves(body).map((l) => l.text), ['hi']);
});
