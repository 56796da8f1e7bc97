import t from 'tap';
import { mergeUsageFromEvent, usageFromBody, usageFromJsonBytes, type Usage } from '../../src/traces/usage.js';

t.test('usage from OpenAI, Responses and Anthropic bodies', async (t) => {
  t.same(usageFromBody({ usage: { prompt_tokens: 10, completion_tokens: 4 } }), { inputTokens: 10, outputTokens: 4 });
  t.same(usageFromBody({ usage: { input_tokens: 7, output_tokens: 2 } }), { inputTokens: 7, outputTokens: 2 });
  t.same(usageFromBody({ id: 'x' }), { inputTokens: undefined, outputTokens: undefined });
  t.same(usageFromBody('nonsense'), { inputTokens: undefined, outputTokens: undefined });
});

t.test('usage accumulated across streamed events', async (t) => {
  const anthropic: Usage = { inputTokens: undefined, outputTokens: undefined };
  mergeUsageFromEvent({ type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 1 } } }, anthropic);
  mergeUsageFromEvent({ type: 'message_delta', usage: { output_tokens: 15 } }, anthropic);
  t.same(anthropic, { inputTokens: 25, outputTokens: 15 });

  const responses: Usage = { inputTokens: undefined, outputTokens: undefined };
  mergeUsageFromEvent({ type: 'response.completed', response: { usage: { input_tokens: 9, output_tokens: 3 } } }, responses);
  t.same(responses, { inputTokens: 9, outputTokens: 3 });

  const openai: Usage = { inputTokens: undefined, outputTokens: undefined };
  mergeUsageFromEvent({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 6 } }, openai);
  t.same(openai, { inputTokens: 5, outputTokens: 6 });
});

const body = (o: unknown) => Buffer.from(JSON.stringify(o));

t.test('usage read from response bytes without parsing the whole body', async (t) => {
  t.same(
    usageFromJsonBytes(body({ choices: [{ message: { content: 'a "usage" {of} braces' } }], usage: { prompt_tokens: 4, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 } } })),
    { inputTokens: 4, outputTokens: 2 },
  );
  t.same(usageFromJsonBytes(body({ usage: { input_tokens: 9, output_tokens: 1 }, content: [] })), { inputTokens: 9, outputTokens: 1 });
  t.same(usageFromJsonBytes(body({ id: 'x' })), { inputTokens: undefined, outputTokens: undefined });
  t.same(usageFromJsonBytes(Buffer.from('{"usage": {"prompt_tokens": 3')), { inputTokens: undefined, outputTokens: undefined }, 'truncated');
  t.same(usageFromJsonBytes(Buffer.from('not json "usage" {broken}')), { inputTokens: undefined, outputTokens: undefined });
});

t.test('only the top-level usage of a body is its bill, wherever a usage key stands in the content', async (t) => {
  const none = { inputTokens: undefined, outputTokens: undefined };
  // OpenAI's order: fields after usage.
  t.same(usageFromJsonBytes(body({ id: 'c', choices: [], usage: { prompt_tokens: 8, completion_tokens: 3 }, service_tier: 'default', system_fingerprint: 'fp_1' })), { inputTokens: 8, outputTokens: 3 });
  // A tool's input the model wrote, after the real usage.
  const toolUsage = { input: { usage: { input_tokens: 0, output_tokens: 0 } }, type: 'tool_use', name: 'report' };
  t.same(usageFromJsonBytes(body({ usage: { input_tokens: 900, output_tokens: 50 }, content: [toolUsage] })), { inputTokens: 900, outputTokens: 50 });
  // Metadata after the real usage.
  t.same(usageFromJsonBytes(body({ output: [], usage: { input_tokens: 12, output_tokens: 3 }, metadata: { usage: { input_tokens: 0, output_tokens: 0 } } })), { inputTokens: 12, outputTokens: 3 });
  // No top-level usage: a tool's input is not one.
  t.same(usageFromJsonBytes(body({ content: [toolUsage] })), none);
  t.same(usageFromJsonBytes(body({ choices: [{ message: { usage: { prompt_tokens: 1, completion_tokens: 1 } } }] })), none);
  // "usage" as a value after the real usage.
  t.same(usageFromJsonBytes(body({ usage: { prompt_tokens: 7, completion_tokens: 2 }, note: 'usage' })), { inputTokens: 7, outputTokens: 2 });
  // Whitespace around the key, the colon and the body's end.
  t.same(usageFromJsonBytes(Buffer.from('{ "choices": [] ,\n  "usage" :\t{ "prompt_tokens": 5, "completion_tokens": 1 }\n}\n')), { inputTokens: 5, outputTokens: 1 });
  // Not an object.
  t.same(usageFromJsonBytes(body({ usage: null })), none);
  t.same(usageFromJsonBytes(body({ usage: [1, 2] })), none);
});

