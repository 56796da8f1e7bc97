import { noticeResponse } from '../policy/refusal.js';
import type { RouteKind } from './routes.js';
import { parseJsonObject, type JsonObject } from '../lib/json.js';

/** A rule's verdict on a complete response. */
export interface ResponseRuling {
  readonly action: 'allow' | 'block' | 'hold';
  readonly rule: string | null;
  readonly reason: string;
}

/** What the trace keeps of a response a rule refused. */
export interface ResponseRuleRecord {
  readonly rule: string;
  readonly action: 'block' | 'hold';
  readonly reason: string;
  /** The response was withheld (false under ff_shadow_enforcement). */
  readonly withheld: boolean;
}

export interface ResponseReview {
  /** ff_shadow_enforcement: the refusal is recorded, the response relayed as it came. */
  readonly shadow: boolean;
  /** The rules' verdict on a parsed response, or null when there is nothing to judge. */
  judge(parsed: unknown): Promise<ResponseRuling | null>;
}

export function responseRuleNotice(rule: string, action: 'block' | 'hold', reason: string): string {
  return action === 'hold'
    ? `[Svc Governance] HELD: rule ${rule} holds this response for a person's approval: ${reason}`
    : `[Svc Governance] BLOCKED: rule ${rule} withheld this response: ${reason}`;
}

/**
 * Puts a complete (non-streamed) response to the rules; a refused one is replaced by a response
 * of the route's shape carrying only the notice. Returns the body to relay. `known`, when given,
 * is `body` already parsed.
 */
export async function reviewResponse(kind: RouteKind, body: Buffer, review: ResponseReview, record: (r: ResponseRuleRecord) => void, known?: JsonObject): Promise<Buffer> {
  const parsed = known ?? parseJsonObject(body);
  if (parsed === null) return body;
  const ruling = await review.judge(parsed);
  if (ruling === null || ruling.action === 'allow') return body;
  record({ rule: ruling.rule!, action: ruling.action, reason: ruling.reason, withheld: !review.shadow });
  if (review.shadow) return body;
  const notice = responseRuleNotice(ruling.rule!, ruling.action, ruling.reason);
  return Buffer.from(JSON.stringify(noticeResponse(kind, parsed as Record<string, unknown>, notice)));
}
