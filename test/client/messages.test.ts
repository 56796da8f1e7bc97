import t from 'tap';
import {
  anthropicToOpenAI,
  MessageConversionError,
  openAIToAnthropic,
  type AnthropicConversation,
  type OpenAIMessage,
} from '../../src/client/index.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

t.test('an Anthropic conversation with tools, images and several system blocks survives a round trip exactly', async (t) => {
  const conversation: AnthropicConversation = {
    system: [
      { type: 'text', text: 'You are careful.' },
      { type: 'text', text: 'Never push to main.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://img.example/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look closer.' },
          { type: 'tool_use', id: 'toolu_1', name: 'zoom', input: { factor: 2, area: { x: 1, y: [2, 3] } } },
          { type: 'tool_use', id: 'toolu_2', name: 'ocr', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'zoomed' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }] },
          { type: 'text', text: 'Now summarise.' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_3', name: 'done', input: { ok: true } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: '' }] },
      { role: 'assistant', content: 'A cat.' },
    ],
  };
  const openai = anthropicToOpenAI(conversation);
  t.strictSame(openai, [
    { role: 'system', content: [{ type: 'text', text: 'You are careful.' }, { type: 'text', text: 'Never push to main.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://img.example/a.png' } },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me look closer.' }],
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'zoom', arguments: '{"factor":2,"area":{"x":1,"y":[2,3]}}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'ocr', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'zoomed' },
    { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }] },
    { role: 'user', content: [{ type: 'text', text: 'Now summarise.' }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_3', type: 'function', function: { name: 'done', arguments: '{"ok":true}' } }] },
    { role: 'tool', tool_call_id: 'toolu_3', content: '' },
    { role: 'assistant', content: 'A cat.' },
  ]);
  t.strictSame(openAIToAnthropic(openai), conversation, 'back to the same Anthropic conversation');
});

t.test('an OpenAI conversation in canonical form survives a round trip exactly', async (t) => {
  const messages: OpenAIMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'List the files.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'a.txt\nb.txt' },
    { role: 'assistant', content: 'Two files.' },
    { role: 'user', content: '' },
    { role: 'assistant', content: '' },
  ];
  const anthropic = openAIToAnthropic(messages);
  t.strictSame(anthropic, {
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'List the files.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'ls', input: { path: '.' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt\nb.txt' }] },
      { role: 'assistant', content: 'Two files.' },
      { role: 'user', content: '' },
      { role: 'assistant', content: '' },
    ],
  });
  t.strictSame(anthropicToOpenAI(anthropic), messages);
});

t.test('empty content stays empty in both directions', async (t) => {
  t.strictSame(anthropicToOpenAI({ messages: [{ role: 'user', content: [] }, { role: 'assistant', content: [] }] }), [
    { role: 'user', content: [] },
    { role: 'assistant', content: [] },
  ]);
  t.strictSame(openAIToAnthropic([{ role: 'user', content: [] }, { role: 'assistant', content: [] }]), { messages: [{ role: 'user', content: [] }, { role: 'assistant', content: [] }] });
  t.strictSame(anthropicToOpenAI({ system: '', messages: [] }), [{ role: 'system', content: '' }], 'an empty system prompt is kept');
  t.strictSame(openAIToAnthropic([]), { messages: [] }, 'no system prompt: none is made up');
  t.strictSame(
    anthropicToOpenAI({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] }] }),
    [{ role: 'tool', tool_call_id: 't1', content: '' }],
    'a tool result without content',
  );
});

t.test('several OpenAI system and developer messages, anywhere, become one system prompt in order', async (t) => {
  const anthropic = openAIToAnthropic([
    { role: 'system', content: 'first' },
    { role: 'developer', content: [{ type: 'text', text: 'second' }, { type: 'text', text: 'third' }] },
    { role: 'user', content: 'hi' },
    { role: 'system', content: 'late rule' },
    { role: 'assistant', content: 'hello' },
  ]);
  t.strictSame(anthropic.system, [
    { type: 'text', text: 'first' },
    { type: 'text', text: 'second' },
    { type: 'text', text: 'third' },
    { type: 'text', text: 'late rule' },
  ]);
  t.strictSame(anthropic.messages, [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ]);
});

t.test('tool results: consecutive tool messages and the user turn after them fold into one user message', async (t) => {
  const anthropic = openAIToAnthropic([
    {
      role: 'assistant',
      content: 'Running both.',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'x', arguments: '' } },
        { id: 'b', type: 'function', function: { name: 'y', arguments: '  ' } },
      ],
    },
    { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 'A' }] },
    { role: 'tool', tool_call_id: 'b', content: 'B' },
    { role: 'user', content: 'and then?' },
    { role: 'user', content: 'hello?' },
  ]);
  t.strictSame(anthropic.messages, [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running both.' },
        { type: 'tool_use', id: 'a', name: 'x', input: {} },
        { type: 'tool_use', id: 'b', name: 'y', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'A' }] },
        { type: 'tool_result', tool_use_id: 'b', content: 'B' },
        { type: 'text', text: 'and then?' },
      ],
    },
    { role: 'user', content: 'hello?' },
  ], 'empty arguments are an empty input; a second user turn stays its own message');
});

t.test('images inside a tool result move to the user message after the results; thinking is dropped', async (t) => {
  const openai = anthropicToOpenAI({
    messages: [
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'tool_use', id: 's1', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'here' },
          { type: 'tool_result', tool_use_id: 's1', is_error: false, content: [{ type: 'text', text: 'captured' }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } }] },
        ],
      },
    ],
  });
  t.strictSame(openai, [
    { role: 'assistant', content: null, tool_calls: [{ id: 's1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 's1', content: [{ type: 'text', text: 'captured' }] },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } }, { type: 'text', text: 'here' }] },
  ]);
});

t.test('an assistant refusal becomes text; text parts of an assistant keep their order before the calls', async (t) => {
  t.strictSame(openAIToAnthropic([{ role: 'assistant', content: null, refusal: 'I cannot help with that.' }]).messages, [
    { role: 'assistant', content: [{ type: 'text', text: 'I cannot help with that.' }] },
  ]);
  t.strictSame(openAIToAnthropic([{ role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'refusal', refusal: 'b' }] }]).messages, [
    { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
  ]);
});

t.test('hostile shapes are refused with the path of what cannot be converted, never dropped silently', async (t) => {
  const refuses = (fn: () => unknown, path: RegExp) => {
    const err = (() => {
      try {
        fn();
      } catch (e) {
        return e;
      }
      return null;
    })();
    t.type(err, MessageConversionError);
    t.equal((err as MessageConversionError).code, 'message_conversion');
    t.match((err as MessageConversionError).path, path);
  };
  refuses(() => openAIToAnthropic([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{not json' } }] }]), /^messages\[0\]\.tool_calls\[0\]\.function\.arguments$/);
  refuses(() => openAIToAnthropic([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1,2]' } }] }]), /arguments$/);
  refuses(() => openAIToAnthropic([{ role: 'user', content: [{ type: 'input_audio', input_audio: {} } as never] }]), /^messages\[0\]\.content\[0\]\.type$/);
  refuses(() => openAIToAnthropic([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }]), /image_url\.url$/);
  refuses(() => openAIToAnthropic([{ role: 'function', name: 'f', content: 'x' } as never]), /^messages\[0\]\.role$/);
  refuses(() => openAIToAnthropic([{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } } as never]), /function_call$/);
  refuses(() => openAIToAnthropic([{ role: 'tool', content: 'x' } as never]), /tool_call_id$/);
  refuses(() => openAIToAnthropic(null as never), /^messages$/);
  refuses(() => openAIToAnthropic([null as never]), /^messages\[0\]$/);
  refuses(() => anthropicToOpenAI({ messages: [{ role: 'system' as never, content: 'x' }] }), /^messages\[0\]\.role$/);
  refuses(() => anthropicToOpenAI({ messages: [{ role: 'user', content: [{ type: 'document', source: {} } as never] }] }), /content\[0\]\.type$/);
  refuses(() => anthropicToOpenAI({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'y', input: 'not an object' } as never] }] }), /content\[0\]\.input$/);
  refuses(() => anthropicToOpenAI({ messages: [{ role: 'user', content: [{ type: 'text', text: 42 } as never] }] }), /content\[0\]\.text$/);
  refuses(() => anthropicToOpenAI({ system: [{ type: 'image' } as never], messages: [] }), /^system\[0\]\.text$/);
  refuses(() => anthropicToOpenAI({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } } as never] }] }), /source\.type$/);
  refuses(() => anthropicToOpenAI({ messages: 'nope' } as never), /^messages$/);
});
