/** Token usage as reported by a provider, normalised across the OpenAI and Anthropic shapes. */
export interface Usage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads a `usage` object of any provider shape into `into`, keeping what it already had. */
function mergeUsageObject(usage: unknown, into: Usage): void {
  if (!isObject(usage)) return;
  const input = num(usage.prompt_tokens) ?? num(usage.input_tokens);
  const output = num(usage.completion_tokens) ?? num(usage.output_tokens);
  if (input !== undefined) into.inputTokens = input;
  if (output !== undefined) into.outputTokens = output;
}

/** Usage of a complete (non-streamed) response body. */
export function usageFromBody(body: unknown): Usage {
  const usage: Usage = { inputTokens: undefined, outputTokens: undefined };
  if (isObject(body)) mergeUsageObject(body.usage, usage);
  return usage;
}

/**
 * Usage carried by one streamed event: OpenAI's final chunk (`usage`), Anthropic's
 * `message_start` (`message.usage`) and `message_delta` (`usage`), and the Responses API's
 * `response.completed` (`response.usage`).
 */
export function mergeUsageFromEvent(event: unknown, into: Usage): void {
  if (!isObject(event)) return;
  mergeUsageObject(event.usage, into);
  if (isObject(event.message)) mergeUsageObject(event.message.usage, into);
  if (isObject(event.response)) mergeUsageObject(event.response.usage, into);
}
