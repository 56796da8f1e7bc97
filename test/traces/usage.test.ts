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

t.test('usage read from response bytes without parsing the whole body', async (t) => {
  const body = (o: unknown) => Buffer.from(JSON.stringify(o));
  t.same(
    usageFromJsonBytes(body({ choices: [{ message: { content: 'a "usage" {of} braces' } }], usage: { prompt_tokens: 4, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 } } })),
    { inputTokens: 4, outputTokens: 2 },
  );
  t.same(usageFromJsonBytes(body({ usage: { input_tokens: 9, output_tokens: 1 }, content: [] })), { inputTokens: 9, outputTokens: 1 });
  t.same(usageFromJsonBytes(body({ id: 'x' })), { inputTokens: undefined, outputTokens: undefined });
  t.same(usageFromJsonBytes(Buffer.from('{"usage": {"prompt_tokens": 3')), { inputTokens: undefined, outputTokens: undefined }, 'truncated');
  t.same(usageFromJsonBytes(Buffer.from('not json "usage" {broken}')), { inputTokens: undefined, outputTokens: undefined });
});
