import type { RefusedVerdict } from '../policy/notice.js';
import type { ToolCall, ToolCallContext, ToolVerdict } from '../policy/tool-judge.js';
import { judgeToolCalls, toolPolicyActive, type ToolCallPolicy } from '../policy/tool-verdict.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';

export type { RefusedVerdict } from '../policy/notice.js';
export { toolCallNotice } from '../policy/notice.js';

/** What the trace keeps of a tool call a rule refused, or an approval let through (never its arguments). */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  /** `hold_approved_bypass_used`: a hold rule stopped the call and an unexpired approval of it let it through. */
  readonly action: RefusedVerdict['action'] | 'hold_approved_bypass_used';
  readonly rule: string;
  readonly source: RefusedVerdict['source'];
  readonly reason: string;
  /** The call was taken out of the response and replaced by a notice (false under ff_shadow_enforcement, and for an approved call). */
  readonly substituted: boolean;
  /** The seed's refusal code, when one applies (SERVER_NOT_ALLOWED, …). */
  readonly code?: string;
  /** The hold recorded for a held call (null: none could be), or the approved hold that let the call through. */
  readonly holdId?: string | null;
  /** Why no hold could be recorded. */
  readonly unrecorded?: string;
  /** The incident the refusal opened or joined, when the control plane answered. */
  readonly incidentId?: string | null;
}

/** One refused call as the proxy reports it to the control plane (POST /decisions/substitutions). */
export interface SubstitutionReport {
  readonly callId: string;
  readonly tool: string;
  readonly action: RefusedVerdict['action'];
  readonly rule: string;
  readonly source: RefusedVerdict['source'];
  readonly reason: string;
  readonly code: string | null;
  readonly holdId: string | null;
}

/**
 * Reports the calls a response's review substituted; answers the incident of each (null where
 * unknown). Never rejects: a control plane that cannot be reached answers nulls, and the trace
 * carries the refusals to it later.
 */
export type SubstitutionReporter = (reports: readonly SubstitutionReport[], ctx: ToolCallContext) => Promise<ReadonlyArray<string | null>>;

export interface ReviewOptions {
  /** ff_shadow_enforcement: refusals are recorded, nothing is substituted and no hold is recorded. */
  readonly shadow: boolean;
  /** Receives every refusal, enforced or shadowed, and every approved call let through. */
  readonly record: (record: ToolCallRecord) => void;
  /** Receives every call that went through unjudged: a judge could not read it and its failure policy is open. */
  readonly unjudged: (call: ToolCall, reason: string) => void;
  /** Reports enforced refusals; without it they are only on the trace. */
  readonly report?: SubstitutionReporter;
}

const ALLOW: ToolVerdict = { action: 'allow' };

/**
 * The tool calls of one response put to the tool-call verdict (policy/tool-verdict.ts). Every
 * refusal is recorded; enforced ones are reported to the control plane (a block waits for its
 * incident id, a hold already has its own). In shadow mode refusals are only recorded, holds are
 * not put to the ledger, and the calls are answered allow.
 */
export class ToolCallReview {
  private constructor(
    private readonly policy: ToolCallPolicy,
    private readonly ctx: ToolCallContext,
    private readonly options: ReviewOptions,
  ) {}

  /** A review of this response's tool calls, or null when nothing could refuse one (nothing is held). */
  static of(policy: ToolCallPolicy, ctx: ToolCallContext, options: ReviewOptions): ToolCallReview | null {
    return toolPolicyActive(policy) ? new ToolCallReview(policy, ctx, options) : null;
  }

  /** One verdict per call: at once when the judges answered at once and nothing waits on the control plane. */
  verdicts(calls: readonly ToolCall[]): MaybePromise<ToolVerdict[]> {
    const policy: ToolCallPolicy = this.options.shadow ? { judges: this.policy.judges, mcp: this.policy.mcp } : this.policy;
    const reported = andThen(judgeToolCalls(calls, this.ctx, policy), (judged: ToolVerdict[]) => this.reported(calls, judged));
    return andThen(reported, (verdicts) => this.recorded(calls, verdicts));
  }

  /** Records every refusal and every approved or unjudged call; answers what the response carries out. */
  private recorded(calls: readonly ToolCall[], verdicts: ToolVerdict[]): ToolVerdict[] {
    calls.forEach((call, i) => {
      const v = verdicts[i]!;
      if (v.action !== 'allow') this.options.record(toolCallRecord(call, v, !this.options.shadow));
      else if (v.bypass !== undefined) {
        this.options.record({ id: call.id, name: call.name, action: 'hold_approved_bypass_used', rule: v.bypass.rule, source: v.bypass.source ?? 'wasm', reason: `approved until ${v.bypass.expiresAt}`, substituted: false, holdId: v.bypass.holdId });
      } else if (v.unjudged !== undefined) this.options.unjudged(call, v.unjudged);
    });
    return this.options.shadow ? calls.map(() => ALLOW) : verdicts;
  }

  /** Reports the enforced refusals (none in shadow mode); a block waits for its incident id. */
  private reported(calls: readonly ToolCall[], verdicts: ToolVerdict[]): MaybePromise<ToolVerdict[]> {
    const report = this.options.report;
    if (this.options.shadow || report === undefined) return verdicts;
    const refused = verdicts.flatMap((v, i) => (v.action === 'allow' ? [] : [{ i, v }]));
    if (refused.length === 0) return verdicts;
    const reports = refused.map(({ i, v }) => ({
      callId: calls[i]!.id,
      tool: calls[i]!.name,
      action: v.action,
      rule: v.rule,
      source: v.source,
      reason: v.reason,
      code: v.action === 'block' ? (v.code ?? null) : null,
      holdId: v.action === 'hold' ? (v.hold?.holdId ?? null) : null,
    }));
    const answered = report(reports, this.ctx);
    if (!refused.some(({ v }) => v.action === 'block')) return verdicts;
    return answered.then((incidents) => {
      const out = [...verdicts];
      refused.forEach(({ i, v }, n) => {
        if (v.action === 'block') out[i] = { ...v, incidentId: incidents[n] ?? null };
      });
      return out;
    });
  }
}

function toolCallRecord(call: ToolCall, verdict: RefusedVerdict, substituted: boolean): ToolCallRecord {
  const base = { id: call.id, name: call.name, action: verdict.action, rule: verdict.rule, source: verdict.source, reason: verdict.reason, substituted };
  if (verdict.action === 'block') {
    return { ...base, ...(verdict.code === undefined ? {} : { code: verdict.code }), ...(verdict.incidentId === undefined ? {} : { incidentId: verdict.incidentId }) };
  }
  const hold = verdict.hold;
  if (hold === undefined) return base;
  return hold.holdId === null ? { ...base, holdId: null, unrecorded: hold.unrecorded } : { ...base, holdId: hold.holdId, incidentId: hold.incidentId };
}
