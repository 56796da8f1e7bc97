import t from 'tap';
import { mergeUsageFromEvent, usageFromBody, type Usage } from '../../src/traces/usage.js';

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
