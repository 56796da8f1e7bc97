import type { ToolCall } from '../policy/tool-judge.js';
import type { RouteKind } from './routes.js';
import { toolCallNotice, type RefusedVerdict, type ToolCallReview } from './tool-calls-review.js';
import { isJsonObject, parseJsonObject } from '../lib/json.js';

type Json = Record<string, unknown>;
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Tool-call arguments as text: Anthropic sends an object, OpenAI a string. */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '{}' : JSON.stringify(value);
}

/**
 * How one response shape carries tool calls: where they are, and how to take one out in favour of
 * a notice the agent reads.
 */
interface ToolCallShape {
  extract(body: Json): ToolCall[];
  substitute(body: Json, refused: ReadonlyMap<string, RefusedVerdict>): void;
}

const chat: ToolCallShape = {
  extract(body) {
    const out: ToolCall[] = [];
    for (const choice of asArray(body.choices)) {
      if (!isJsonObject(choice) || !isJsonObject(choice.message)) continue;
      for (const call of asArray(choice.message.tool_calls)) {
        if (!isJsonObject(call) || !isJsonObject(call.function)) continue;
        out.push({ id: str(call.id), name: str(call.function.name), arguments: argumentsText(call.function.arguments) });
      }
    }
    return out;
  },
  substitute(body, refused) {
    for (const choice of asArray(body.choices)) {
      if (!isJsonObject(choice) || !isJsonObject(choice.message)) continue;
      const message = choice.message;
      const notices: string[] = [];
      const kept = asArray(message.tool_calls).filter((call) => {
        const verdict = isJsonObject(call) ? refused.get(str(call.id)) : undefined;
        if (verdict !== undefined && isJsonObject(call) && isJsonObject(call.function)) notices.push(toolCallNotice({ name: str(call.function.name) }, verdict));
        return verdict === undefined;
      });
      if (notices.length === 0) continue;
      message.content = [str(message.content), ...notices].filter((t) => t !== '').join('\n\n');
      if (kept.length > 0) message.tool_calls = kept;
      else {
        delete message.tool_calls;
        choice.finish_reason = 'stop';
      }
    }
  },
};

const messages: ToolCallShape = {
  extract(body) {
    return asArray(body.content)
      .filter((b): b is Json => isJsonObject(b) && b.type === 'tool_use')
      .map((b) => ({ id: str(b.id), name: str(b.name), arguments: argumentsText(b.input) }));
  },
  substitute(body, refused) {
    let toolUses = 0;
    body.content = asArray(body.content).map((block) => {
      if (!isJsonObject(block) || block.type !== 'tool_use') return block;
      const verdict = refused.get(str(block.id));
      if (verdict === undefined) {
        toolUses++;
        return block;
      }
      return { type: 'text', text: toolCallNotice({ name: str(block.name) }, verdict) };
    });
    if (toolUses === 0 && body.stop_reason === 'tool_use') body.stop_reason = 'end_turn';
  },
};

/** A Responses API message item carrying `text`. */
export function responsesMessageItem(id: string, text: string): Json {
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

const responses: ToolCallShape = {
  extract(body) {
    return asArray(body.output)
      .filter((item): item is Json => isJsonObject(item) && item.type === 'function_call')
      .map((item) => ({ id: str(item.call_id), name: str(item.name), arguments: argumentsText(item.arguments) }));
  },
  substitute(body, refused) {
    body.output = asArray(body.output).map((item) => {
      if (!isJsonObject(item) || item.type !== 'function_call') return item;
      const verdict = refused.get(str(item.call_id));
      return verdict === undefined ? item : responsesMessageItem(`msg_svc_${str(item.call_id)}`, toolCallNotice({ name: str(item.name) }, verdict));
    });
  },
};

const SHAPES: Partial<Record<RouteKind, ToolCallShape>> = { chat, messages, responses };

/** Whether a route's responses can carry tool calls. */
export function carriesToolCalls(kind: RouteKind): boolean {
  return SHAPES[kind] !== undefined;
}

export function extractToolCalls(kind: RouteKind, body: Json): ToolCall[] {
  return SHAPES[kind]?.extract(body) ?? [];
}

/**
 * Puts a complete response's tool calls to the review and takes out every refused one. Returns
 * the body to relay: the same buffer when nothing was refused.
 */
export async function reviewResponseToolCalls(kind: RouteKind, body: Buffer, review: ToolCallReview): Promise<Buffer> {
  const shape = SHAPES[kind];
  if (shape === undefined) return body;
  const parsed = parseJsonObject(body);
  if (parsed === null) return body;
  const calls = shape.extract(parsed);
  if (calls.length === 0) return body;
  const verdicts = await review.verdicts(calls);
  const refused = new Map<string, RefusedVerdict>();
  calls.forEach((call, i) => {
    const v = verdicts[i]!;
    if (v.action !== 'allow') refused.set(call.id, v);
  });
  if (refused.size === 0) return body;
  shape.substitute(parsed, refused);
  return Buffer.from(JSON.stringify(parsed));
}
