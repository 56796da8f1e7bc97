import type { RouteKind } from './routes.js';
import type { ToolCallReview } from './tool-calls-review.js';
import { parseJsonObject, type JsonObject } from '../lib/json.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { chatBody } from './tool-calls/chat.js';
import { messagesBody } from './tool-calls/messages.js';
import { responsesBody } from './tool-calls/responses.js';
import type { BodyShape, Json, Refusal } from './tool-calls/shape.js';

const SHAPES: Partial<Record<RouteKind, BodyShape>> = { chat: chatBody, messages: messagesBody, responses: responsesBody };

/** Whether a route's responses can carry tool calls. */
export function carriesToolCalls(kind: RouteKind): boolean {
  return SHAPES[kind] !== undefined;
}

/**
 * Puts a complete response's tool calls to the review and takes out every refused one. Returns
 * the body to relay: the same buffer when nothing was refused; at once when the review answered at
 * once. `known`, when given, is `body` already parsed (it may be changed).
 */
export function reviewResponseToolCalls(kind: RouteKind, body: Buffer, review: ToolCallReview, known?: JsonObject): MaybePromise<Buffer> {
  const shape = SHAPES[kind];
  if (shape === undefined) return body;
  const response = known ?? parseJsonObject(body);
  if (response === null) return body;
  const found = shape.calls(response);
  if (found.length === 0) return body;
  return andThen(review.verdicts(found.map((f) => f.call)), (verdicts) => {
    const refused = new Map<Json, Refusal>();
    found.forEach(({ call, item }, i) => {
      const verdict = verdicts[i]!;
      if (verdict.action !== 'allow') refused.set(item, { call, verdict });
    });
    if (refused.size === 0) return body;
    shape.substitute(response, refused);
    return Buffer.from(JSON.stringify(response));
  });
}
