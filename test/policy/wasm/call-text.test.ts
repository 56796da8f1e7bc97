import t from 'tap';
import { requestText, responseText } from '../../../src/policy/wasm/call-text.js';

t.test('a request\'s text is its last message, whatever the route', async (t) => {
  t.equal(requestText({ messages: [{ role: 'user', content: 'first' }, { role: 'user', content: 'last' }] }), 'last');
  t.equal(
    requestText({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', source: {} }, { type: 'text', text: 'b' }] }] }),
    'a\nb',
    'Anthropic and OpenAI content parts',
  );
  t.equal(requestText({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'output' }] }] }), 'output');
  t.equal(requestText({ input: 'plain responses input' }), 'plain responses input');
  t.equal(requestText({ input: [{ role: 'user', content: 'from a list' }] }), 'from a list');
  t.equal(requestText({ input: [{ type: 'function_call_output', call_id: 'c', output: 'tool said' }] }), 'tool said');
  t.equal(requestText({ prompt: 'legacy' }), 'legacy');
  t.equal(requestText({ model: 'x' }), null);
  t.equal(requestText('not an object'), null);
});

t.test('a response\'s text is the assistant\'s reply in every shape', async (t) => {
  t.equal(responseText({ choices: [{ message: { role: 'assistant', content: 'chat' } }] }), 'chat');
  t.equal(responseText({ choices: [{ text: 'legacy' }] }), 'legacy');
  t.equal(responseText({ content: [{ type: 'text', text: 'claude' }, { type: 'tool_use', id: 't', name: 'n', input: {} }] }), 'claude');
  t.equal(
    responseText({ output: [{ type: 'function_call' }, { type: 'message', content: [{ type: 'output_text', text: 'responses' }] }] }),
    'responses',
  );
  t.equal(responseText({ choices: [{ message: { content: null, tool_calls: [] } }] }), null, 'a tool-call-only answer has no text');
});
