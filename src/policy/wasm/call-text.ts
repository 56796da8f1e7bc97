import { isJsonObject } from '../../lib/json.js';
/** Text of a message content: a string, or the text parts of a list of parts. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts = content.filter(isJsonObject).map((p) => (typeof p.text === 'string' ? p.text : typeof p.content === 'string' ? p.content : ''));
  return parts.filter((t) => t !== '').join('\n');
}

/**
 * What a rule sees as a request's text: its last message (chat and Anthropic `messages`, the
 * Responses API's `input`), or the prompt of a legacy completion, or the embeddings input.
 */
export function requestText(body: unknown): string | null {
  if (!isJsonObject(body)) return null;
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : null;
  if (list !== null) {
    const last = list.at(-1);
    if (typeof last === 'string') return last;
    return isJsonObject(last) ? contentText(last.content ?? last.output) : null;
  }
  if (typeof body.input === 'string') return body.input;
  if (typeof body.prompt === 'string') return body.prompt;
  return null;
}

/**
 * What a rule sees as a complete response's text: the assistant's reply (chat `message.content`,
 * Anthropic text blocks, Responses API `output_text` parts, a legacy completion's `text`), or null
 * when it has none.
 */
export function responseText(body: unknown): string | null {
  if (!isJsonObject(body)) return null;
  const parts: string[] = [];
  for (const choice of Array.isArray(body.choices) ? body.choices : []) {
    if (!isJsonObject(choice)) continue;
    if (typeof choice.text === 'string') parts.push(choice.text);
    if (isJsonObject(choice.message) && typeof choice.message.content === 'string') parts.push(choice.message.content);
  }
  if (Array.isArray(body.content)) parts.push(contentText(body.content) ?? '');
  for (const item of Array.isArray(body.output) ? body.output : []) {
    if (isJsonObject(item) && item.type === 'message') parts.push(contentText(item.content) ?? '');
  }
  const text = parts.filter((p) => p !== '').join('\n');
  return text === '' ? null : text;
}
