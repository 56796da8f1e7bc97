import { isJsonWhitespace, parseJsonObject } from '../lib/json.js';

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
const OPEN_LIST = 0x5b; // [
const CLOSE_LIST = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

const none = (): Usage => ({ inputTokens: undefined, outputTokens: undefined });

/**
 * Usage of a complete JSON response body. Providers put the top-level `usage` object at or near
 * the end, after the content, so only it is parsed: the last `"usage"` key, when what follows its
 * object closes the body's own object. Otherwise (a `usage` inside the content, a tool's input or
 * metadata after the real one, or a provider that puts it first) the whole body is parsed, so
 * what the model wrote is never read as the bill.
 */
export function usageFromJsonBytes(body: Buffer): Usage {
  const key = body.lastIndexOf(USAGE_KEY);
  if (key < 0) return none();
  const value = topLevelObjectAfter(body, key + USAGE_KEY.length);
  if (value === null) return usageFromBody(parseJsonObject(body));
  try {
    return usageFromBody({ usage: JSON.parse(body.toString('utf8', value.start, value.end)) });
  } catch {
    return none();
  }
}

/**
 * The object that is the value of the key ending at `from`, when the object holding that key is
 * the body's outermost one (after the value, the body's brackets close exactly once before its
 * end); null otherwise. One pass over the bytes after the key.
 */
function topLevelObjectAfter(body: Buffer, from: number): { start: number; end: number } | null {
  let at = from;
  while (isJsonWhitespace(body[at])) at++;
  if (body[at] !== COLON) return null;
  at++;
  while (isJsonWhitespace(body[at])) at++;
  if (body[at] !== OPEN) return null;
  const start = at;
  let end = -1;
  // Depth relative to the object holding the key: 1 inside the value, -1 once the holder closes.
  let depth = 0;
  let inString = false;
  for (; at < body.length; at++) {
    const c = body[at];
    if (inString) {
      if (c === BACKSLASH) at++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN || c === OPEN_LIST) depth++;
    else if (c === CLOSE || c === CLOSE_LIST) {
      depth--;
      if (depth === 0 && end < 0) end = at + 1;
      else if (depth === -1) break;
    }
  }
  if (end < 0 || depth !== -1) return null;
  for (at++; at < body.length; at++) if (!isJsonWhitespace(body[at])) return null;
  return { start, end };
}
