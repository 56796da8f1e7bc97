// @ts-check
/** OpenAI chat completion streams as the provider sends them, for the SSE micro-benchmarks. */

/** Token-sized pieces of an ordinary coding answer. */
export const PROSE_WORDS = ['Sure', ',', ' here', ' is', ' the', ' refactored', ' function', ':\n\n```ts\n', 'export', ' const', ' cache', ' =', ' new', ' Map', '();\n```', '.'];

/**
 * The events of one streamed answer: the role chunk, `contentChunks` content deltas cycling
 * through `words`, the finish chunk, the usage chunk and `[DONE]`.
 * @param {number} n  the stream's number, for its id
 * @param {number} contentChunks
 * @param {readonly string[]} [words]
 * @returns {string[]}
 */
export function chatStream(n, contentChunks, words = PROSE_WORDS) {
  const head = {
    id: `chatcmpl-B9MHDbslfkBeAs8l4bebGdF${String(n).padStart(6, '0')}`,
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-mini-2024-07-18',
    service_tier: 'default',
    system_fingerprint: 'fp_06737a9306',
  };
  /**
   * @param {object} delta
   * @param {string | null} finishReason
   */
  const chunk = (delta, finishReason) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  for (let i = 0; i < contentChunks; i++) events.push(chunk({ content: words[i % words.length] }, null));
  events.push(chunk({}, 'stop'));
  events.push(`data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 250, completion_tokens: contentChunks, total_tokens: 300 } })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}
