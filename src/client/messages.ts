import { MessageConversionError } from './errors.js';

/**
 * Conversation conversion between Anthropic Messages and OpenAI chat completions, both ways:
 * system prompts, text, images, tool calls and tool results.
 *
 * Where the formats differ:
 * - Anthropic has one system prompt; OpenAI `system` (and `developer`) messages anywhere in the
 *   conversation are hoisted into it, in order.
 * - Anthropic returns tool results inside a user message; OpenAI has one `tool` message per result,
 *   right after the assistant's calls. Results come first, the rest of that user message follows as
 *   a user message; back in Anthropic form they are one user message again.
 * - OpenAI tool messages carry no images and no error flag: images of a tool result move to the
 *   user message after the results; `is_error` is dropped.
 * - Within an assistant turn, text comes before tool calls in OpenAI form.
 * - Thinking blocks (the model's own reasoning, signed for Anthropic only) are dropped; `name`
 *   fields and `cache_control` are dropped. Anything else without an equivalent (documents, audio,
 *   files, legacy function calls) is refused with MessageConversionError rather than lost.
 */

export interface OpenAITextPart {
  type: 'text';
  text: string;
}
export interface OpenAIImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}
export interface OpenAIRefusalPart {
  type: 'refusal';
  refusal: string;
}
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
export interface OpenAISystemMessage {
  role: 'system' | 'developer';
  content: string | OpenAITextPart[];
  name?: string;
}
export interface OpenAIUserMessage {
  role: 'user';
  content: string | Array<OpenAITextPart | OpenAIImagePart>;
  name?: string;
}
export interface OpenAIAssistantMessage {
  role: 'assistant';
  content?: string | null | Array<OpenAITextPart | OpenAIRefusalPart>;
  tool_calls?: OpenAIToolCall[];
  refusal?: string | null;
  name?: string;
}
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | OpenAITextPart[];
}
export type OpenAIMessage = OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage;

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}
export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
}
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
}
export interface AnthropicThinkingBlock {
  type: 'thinking' | 'redacted_thinking';
  thinking?: string;
  signature?: string;
  data?: string;
}
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock | AnthropicThinkingBlock;
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlock[];
}
/** The conversation part of an Anthropic Messages request. */
export interface AnthropicConversation {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(path: string, message: string): never {
  throw new MessageConversionError(path, message);
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') fail(path, `expected a string, got ${v === null ? 'null' : typeof v}`);
  return v;
}

function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) fail(path, 'expected an array');
  return v;
}

function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) fail(path, 'expected an object');
  return v;
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

// ---------------------------------------------------------------------------------------------
// Anthropic → OpenAI

function textPart(block: Obj, path: string): OpenAITextPart {
  return { type: 'text', text: str(block.text, `${path}.text`) };
}

function imagePart(block: Obj, path: string): OpenAIImagePart {
  const source = obj(block.source, `${path}.source`);
  if (source.type === 'base64') {
    return { type: 'image_url', image_url: { url: `data:${str(source.media_type, `${path}.source.media_type`)};base64,${str(source.data, `${path}.source.data`)}` } };
  }
  if (source.type === 'url') return { type: 'image_url', image_url: { url: str(source.url, `${path}.source.url`) } };
  return fail(`${path}.source.type`, `image source '${String(source.type)}' has no OpenAI equivalent`);
}

function systemToOpenAI(system: unknown): OpenAISystemMessage[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  return [{ role: 'system', content: arr(system, 'system').map((b, i) => textPart(obj(b, `system[${i}]`), `system[${i}]`)) }];
}

/** A tool result's content: its text for the tool message, its images for the user message after. */
function toolResultContent(content: unknown, path: string): { content: string | OpenAITextPart[]; images: OpenAIImagePart[] } {
  if (content === undefined || content === null) return { content: '', images: [] };
  if (typeof content === 'string') return { content, images: [] };
  const texts: OpenAITextPart[] = [];
  const images: OpenAIImagePart[] = [];
  arr(content, path).forEach((b, i) => {
    const block = obj(b, `${path}[${i}]`);
    if (block.type === 'text') texts.push(textPart(block, `${path}[${i}]`));
    else if (block.type === 'image') images.push(imagePart(block, `${path}[${i}]`));
    else fail(`${path}[${i}].type`, `a '${String(block.type)}' block in a tool result has no OpenAI equivalent`);
  });
  return { content: texts.length === 0 && images.length > 0 ? '' : texts, images };
}

function userToOpenAI(content: unknown, path: string): OpenAIMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: OpenAIToolMessage[] = [];
  const carried: OpenAIImagePart[] = [];
  const rest: Array<OpenAITextPart | OpenAIImagePart> = [];
  arr(content, `${path}.content`).forEach((b, i) => {
    const at = `${path}.content[${i}]`;
    const block = obj(b, at);
    switch (block.type) {
      case 'text':
        rest.push(textPart(block, at));
        break;
      case 'image':
        rest.push(imagePart(block, at));
        break;
      case 'tool_result': {
        const result = toolResultContent(block.content, `${at}.content`);
        tools.push({ role: 'tool', tool_call_id: str(block.tool_use_id, `${at}.tool_use_id`), content: result.content });
        carried.push(...result.images);
        break;
      }
      default:
        fail(`${at}.type`, `a user '${String(block.type)}' block has no OpenAI chat equivalent`);
    }
  });
  const user: Array<OpenAITextPart | OpenAIImagePart> = [...carried, ...rest];
  return tools.length > 0 && user.length === 0 ? tools : [...tools, { role: 'user', content: user }];
}

function assistantToOpenAI(content: unknown, path: string): OpenAIAssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: OpenAITextPart[] = [];
  const calls: OpenAIToolCall[] = [];
  arr(content, `${path}.content`).forEach((b, i) => {
    const at = `${path}.content[${i}]`;
    const block = obj(b, at);
    switch (block.type) {
      case 'text':
        texts.push(textPart(block, at));
        break;
      case 'tool_use': {
        const input = block.input === undefined ? {} : obj(block.input, `${at}.input`);
        calls.push({ id: str(block.id, `${at}.id`), type: 'function', function: { name: str(block.name, `${at}.name`), arguments: JSON.stringify(input) } });
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        fail(`${at}.type`, `an assistant '${String(block.type)}' block has no OpenAI chat equivalent`);
    }
  });
  const message: OpenAIAssistantMessage = { role: 'assistant', content: texts.length === 0 && calls.length > 0 ? null : texts };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** An Anthropic conversation (system prompt and messages) as OpenAI chat messages. */
export function anthropicToOpenAI(conversation: AnthropicConversation): OpenAIMessage[] {
  const c = obj(conversation, 'conversation');
  const out: OpenAIMessage[] = systemToOpenAI(c.system);
  arr(c.messages, 'messages').forEach((m, i) => {
    const path = `messages[${i}]`;
    const message = obj(m, path);
    if (message.role === 'user') out.push(...userToOpenAI(message.content, path));
    else if (message.role === 'assistant') out.push(assistantToOpenAI(message.content, path));
    else fail(`${path}.role`, `role '${String(message.role)}' is not an Anthropic message role (the system prompt goes in 'system')`);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// OpenAI → Anthropic

function textBlocks(content: unknown, path: string, allowRefusal = false): AnthropicTextBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return arr(content, path).map((p, i) => {
    const part = obj(p, `${path}[${i}]`);
    if (part.type === 'text') return { type: 'text', text: str(part.text, `${path}[${i}].text`) };
    if (allowRefusal && part.type === 'refusal') return { type: 'text', text: str(part.refusal, `${path}[${i}].refusal`) };
    return fail(`${path}[${i}].type`, `a '${String(part.type)}' part has no Anthropic equivalent here`);
  });
}

function imageBlock(part: Obj, path: string): AnthropicImageBlock {
  const url = str(obj(part.image_url, `${path}.image_url`).url, `${path}.image_url.url`);
  const data = DATA_URL.exec(url);
  if (data !== null) return { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  return fail(`${path}.image_url.url`, 'an image must be a base64 data URL or an http(s) URL');
}

function userBlocks(content: unknown, path: string): Array<AnthropicTextBlock | AnthropicImageBlock> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return arr(content, path).map((p, i) => {
    const part = obj(p, `${path}[${i}]`);
    if (part.type === 'text') return { type: 'text', text: str(part.text, `${path}[${i}].text`) };
    if (part.type === 'image_url') return imageBlock(part, `${path}[${i}]`);
    return fail(`${path}[${i}].type`, `a user '${String(part.type)}' part has no Anthropic equivalent`);
  });
}

function toolInput(args: unknown, path: string): Record<string, unknown> {
  const text = str(args, path);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(path, 'tool call arguments are not JSON; Anthropic needs an input object');
  }
  if (!isObj(parsed)) return fail(path, 'tool call arguments are not a JSON object; Anthropic needs an input object');
  return parsed;
}

function assistantToAnthropic(message: Obj, path: string): AnthropicMessage {
  const calls = message.tool_calls === undefined || message.tool_calls === null ? [] : arr(message.tool_calls, `${path}.tool_calls`);
  if (message.function_call !== undefined && message.function_call !== null) fail(`${path}.function_call`, 'legacy function calls are not converted; use tool_calls');
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : null;
  const content = message.content;
  if (typeof content === 'string' && calls.length === 0 && refusal === null) return { role: 'assistant', content };
  const blocks: AnthropicContentBlock[] = [];
  if (typeof content === 'string') {
    if (content !== '') blocks.push({ type: 'text', text: content });
  } else if (content !== undefined && content !== null) blocks.push(...textBlocks(content, `${path}.content`, true));
  else if (refusal !== null) blocks.push({ type: 'text', text: refusal });
  calls.forEach((c, i) => {
    const at = `${path}.tool_calls[${i}]`;
    const call = obj(c, at);
    if (call.type !== undefined && call.type !== 'function') fail(`${at}.type`, `a '${String(call.type)}' tool call has no Anthropic equivalent`);
    const fn = obj(call.function, `${at}.function`);
    blocks.push({ type: 'tool_use', id: str(call.id, `${at}.id`), name: str(fn.name, `${at}.function.name`), input: toolInput(fn.arguments ?? '', `${at}.function.arguments`) });
  });
  return { role: 'assistant', content: blocks };
}

/** OpenAI chat messages as an Anthropic conversation: the system prompt apart, tool results folded into user messages. */
export function openAIToAnthropic(messages: readonly OpenAIMessage[]): AnthropicConversation {
  const system: Array<{ content: unknown; path: string }> = [];
  const out: AnthropicMessage[] = [];
  /** The user message tool results are being gathered into, while nothing else came in between. */
  let results: AnthropicMessage | null = null;
  arr(messages, 'messages').forEach((m, i) => {
    const path = `messages[${i}]`;
    const message = obj(m, path);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push({ content: message.content, path: `${path}.content` });
        return;
      case 'user': {
        if (results !== null) {
          (results.content as AnthropicContentBlock[]).push(...userBlocks(message.content, `${path}.content`));
          results = null;
          return;
        }
        const content = message.content;
        out.push({ role: 'user', content: typeof content === 'string' ? content : userBlocks(content, `${path}.content`) });
        return;
      }
      case 'assistant':
        results = null;
        out.push(assistantToAnthropic(message, path));
        return;
      case 'tool': {
        const content = message.content;
        const block: AnthropicToolResultBlock = {
          type: 'tool_result',
          tool_use_id: str(message.tool_call_id, `${path}.tool_call_id`),
          content: typeof content === 'string' ? content : textBlocks(content, `${path}.content`),
        };
        if (results === null) {
          results = { role: 'user', content: [] };
          out.push(results);
        }
        (results.content as AnthropicContentBlock[]).push(block);
        return;
      }
      default:
        fail(`${path}.role`, `role '${String(message.role)}' has no Anthropic equivalent`);
    }
  });
  const conversation: AnthropicConversation = { messages: out };
  if (system.length === 1 && typeof system[0]!.content === 'string') conversation.system = system[0]!.content;
  else if (system.length > 0) conversation.system = system.flatMap((s) => textBlocks(s.content, s.path));
  return conversation;
}
