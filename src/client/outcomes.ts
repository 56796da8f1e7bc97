import { RequestRejectedError, UpstreamFailureError, VerdictError, type SvcClientError } from './errors.js';
import { errorBodySchema, headerValue, type ResponseHeaders } from './wire.js';

/**
 * How the proxy tells a caller what its policy did, read into the client's outcomes:
 *
 * - `x-svc-enforcement` (BYPASS, ENHANCE, HIJACK, KILL) and `x-svc-trace-id` on every answer. The
 *   status line of a stream goes out before its tool calls are reviewed, so on a stream the
 *   header only knows what the request path decided (an anomaly steer, a refusal).
 * - A refusal's body, in the route's provider shape, carries `code`, `trace_id` and, when the
 *   control plane recorded it, `incident_id`. Inside a stream it is a final error event.
 * - A steer is visible in the answer itself: a refused tool call is replaced by a notice starting
 *   `[Svc Governance] BLOCKED:` or `HELD:`, and decide rules append `[Svc Governance] VIOLATION` or
 *   `AMBIGUOUS` notes. Those notices are the reason a HIJACK reports.
 * - A response the policy withheld (response DLP, a response rule) is replaced by a notice too:
 *   `[svc] This response was withheld by policy: …` or `[Svc Governance] BLOCKED: rule … withheld
 *   this response`; the header says KILL when the whole answer was reviewed before it went out.
 *   In a stream, DLP cuts the rest of the answer off with `[svc: the rest of this response was
 *   withheld: …]`, after the status line said BYPASS.
 */

export type Enforcement = 'BYPASS' | 'ENHANCE' | 'HIJACK' | 'KILL';
const ENFORCEMENTS: ReadonlySet<string> = new Set(['BYPASS', 'ENHANCE', 'HIJACK', 'KILL']);

/** What a policy block carries: the `kill` event's payload and VerdictError's `verdict`. */
export interface Verdict {
  readonly enforcement: 'KILL';
  readonly traceId: string | null;
  /** The proxy's refusal code (`dlp_blocked`, `policy_denied`, `prompt_injection`, `anomaly_killed`, `OVERAGE_HARD_CAP_EXCEEDED`, …); `response_withheld` for an answer replaced by a notice. */
  readonly code: string | null;
  readonly reason: string;
  /** The HTTP status of the refusal (200 when the answer was withheld, or the refusal came inside a stream). */
  readonly status: number;
  /** The incident the control plane recorded the refusal under, when it did. */
  readonly incidentId: string | null;
}

/** The `hijack` event's payload: the request was steered (a tool call substituted, a corrective card, a note). */
export interface HijackEvent {
  readonly traceId: string | null;
  readonly reason: string;
  /** Each governance notice found in the answer, in order. */
  readonly notices: readonly string[];
}

/** Codes the proxy refuses with on policy grounds; a stream's error event carrying one is a verdict (its header could not say KILL). */
export const POLICY_CODES: ReadonlySet<string> = new Set([
  'policy_denied',
  'dlp_blocked',
  'prompt_injection',
  'anomaly_killed',
  'model_not_allowed',
  'byok_required',
  'OVERAGE_HARD_CAP_EXCEEDED',
]);

export function enforcementOf(headers: ResponseHeaders): Enforcement | null {
  const value = headerValue(headers, 'x-svc-enforcement')?.toUpperCase();
  return value !== undefined && ENFORCEMENTS.has(value) ? (value as Enforcement) : null;
}

export function traceIdOf(headers: ResponseHeaders): string | null {
  return headerValue(headers, 'x-svc-trace-id') || null;
}

const NOTICE_MARK = '[Svc Governance] ';
const WITHHELD_MARKS = ['[svc] This response was withheld by policy', '[svc: the rest of this response was withheld'];
const WITHHELD_RULE = /^\[Svc Governance\] (?:BLOCKED|HELD): rule \S+ (?:withheld|holds) this response/;

/** The notices in a text: each runs from its mark to the next mark or blank line. */
function noticesIn(text: string, mark: string): string[] {
  const out: string[] = [];
  let at = text.indexOf(mark);
  while (at >= 0) {
    const next = text.indexOf(mark, at + mark.length);
    const paragraph = text.indexOf('\n\n', at);
    const end = Math.min(next < 0 ? text.length : next, paragraph < 0 ? text.length : paragraph);
    out.push(text.slice(at, end).trim());
    at = next;
  }
  return out;
}

/** The gateway's notices in an answer's text (steers, notes, withheld answers). */
export function governanceNotices(text: string): string[] {
  return noticesIn(text, NOTICE_MARK);
}

/** The notice that replaced a withheld answer, if the text is one. */
export function withheldNotice(text: string): string | null {
  for (const mark of WITHHELD_MARKS) {
    const dlp = noticesIn(text, mark)[0];
    if (dlp !== undefined) return dlp;
  }
  return governanceNotices(text).find((n) => WITHHELD_RULE.test(n)) ?? null;
}

/** The hijack a steered answer reports; the reason is its notices, else the header's word alone. */
export function hijackOf(traceId: string | null, notices: readonly string[]): HijackEvent {
  const reason = notices.length > 0 ? notices.join('\n') : `the gateway steered this request (enforcement HIJACK${traceId === null ? '' : `, trace ${traceId}`})`;
  return { traceId, reason, notices };
}

/** The verdict of an answer the policy withheld, replaced by `notice`. */
export function withheldVerdict(traceId: string | null, notice: string, status: number): Verdict {
  return { enforcement: 'KILL', traceId, code: 'response_withheld', reason: notice, status, incidentId: null };
}

function readErrorBody(text: string): { message: string; code: string | null; traceId: string | null; incidentId: string | null } | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = errorBodySchema.safeParse(json);
  if (!parsed.success) return null;
  const e = parsed.data.error;
  return { message: e.message, code: e.code === null || e.code === undefined ? (e.type ?? null) : String(e.code), traceId: e.trace_id ?? null, incidentId: e.incident_id ?? null };
}

/** The error an answer with an error status stands for: a verdict when the proxy says KILL. */
export function errorFromResponse(status: number, headers: ResponseHeaders, text: string): SvcClientError {
  const body = readErrorBody(text);
  const traceId = traceIdOf(headers) ?? body?.traceId ?? null;
  const message = body?.message ?? `the gateway answered ${status}${text.length > 0 ? `: ${text.slice(0, 200)}` : ''}`;
  const details = { status, traceId, gatewayCode: body?.code ?? null };
  if (enforcementOf(headers) === 'KILL') {
    return new VerdictError({ enforcement: 'KILL', traceId, code: body?.code ?? null, reason: message, status, incidentId: headerValue(headers, 'x-svc-incident-id') ?? body?.incidentId ?? null });
  }
  if (status >= 500 || status === 429 || status === 408) return new UpstreamFailureError(message, details);
  return new RequestRejectedError(message, details);
}

/** The error a stream's final error event stands for (its status line said 200). */
export function errorFromStreamEvent(data: Record<string, unknown>, headerTraceId: string | null): SvcClientError {
  const body = readErrorBody(JSON.stringify(data));
  const traceId = headerTraceId ?? body?.traceId ?? null;
  const message = body?.message ?? 'the stream ended with an error event';
  if (body?.code !== null && body?.code !== undefined && POLICY_CODES.has(body.code)) {
    return new VerdictError({ enforcement: 'KILL', traceId, code: body.code, reason: message, status: 200, incidentId: body.incidentId });
  }
  return new UpstreamFailureError(message, { status: 200, traceId, gatewayCode: body?.code ?? null });
}
