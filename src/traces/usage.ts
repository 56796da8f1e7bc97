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

const USAGE_KEY = Buffer.from('"usage"');
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Usage of a complete JSON response body, reading only the top-level `usage` object (providers
 * put it last) instead of parsing the whole body.
 */
export function usageFromJsonBytes(body: Buffer): Usage {
  const none: Usage = { inputTokens: undefined, outputTokens: undefined };
  const key = body.lastIndexOf(USAGE_KEY);
  if (key < 0) return none;
  const start = body.indexOf(OPEN, key + USAGE_KEY.length);
  if (start < 0) return none;
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) {
      try {
        return usageFromBody({ usage: JSON.parse(body.toString('utf8', start, i + 1)) });
      } catch {
        return none;
      }
    }
  }
  return none;
}
