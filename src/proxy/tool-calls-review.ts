import type { ToolCall, ToolCallContext, ToolCallJudge, ToolVerdict } from '../policy/tool-judge.js';

export type RefusedVerdict = Exclude<ToolVerdict, { action: 'allow' }>;

/** What the trace keeps of a tool call a judge refused (never its arguments). */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly action: RefusedVerdict['action'];
  readonly rule: string;
  readonly source: RefusedVerdict['source'];
  readonly reason: string;
  /** The call was taken out of the response and replaced by a notice (false under ff_shadow_enforcement). */
  readonly substituted: boolean;
}

export interface ReviewOptions {
  /** ff_shadow_enforcement: refusals are recorded, nothing is substituted. */
  readonly shadow: boolean;
  /** Receives every refusal, enforced or shadowed. */
  readonly record: (record: ToolCallRecord) => void;
}

const ALLOW: ToolVerdict = { action: 'allow' };

/**
 * The tool calls of one response put to every active judge. Judges are asked in order and the
 * first non-allow verdict for a call wins. A judge that breaks its contract and rejects refuses
 * the call: a security check fails closed. Every refusal is recorded; in shadow mode it is only
 * recorded, and the calls are answered allow.
 */
export class ToolCallReview {
  private constructor(
    private readonly judges: readonly ToolCallJudge[],
    private readonly ctx: ToolCallContext,
    private readonly options: ReviewOptions,
  ) {}

  /** A review of this response's tool calls, or null when no judge is active (nothing is held). */
  static of(judges: readonly ToolCallJudge[], ctx: ToolCallContext, options: ReviewOptions): ToolCallReview | null {
    const active = judges.filter((j) => j.active);
    return active.length === 0 ? null : new ToolCallReview(active, ctx, options);
  }

  async verdicts(calls: readonly ToolCall[]): Promise<ToolVerdict[]> {
    const verdicts = await this.combined(calls);
    calls.forEach((call, i) => {
      const v = verdicts[i]!;
      if (v.action !== 'allow') this.options.record(toolCallRecord(call, v, !this.options.shadow));
    });
    return this.options.shadow ? calls.map(() => ALLOW) : verdicts;
  }

  private async combined(calls: readonly ToolCall[]): Promise<ToolVerdict[]> {
    if (calls.length === 0) return [];
    const all = await Promise.all(
      this.judges.map((j) =>
        j.judge(calls, this.ctx).catch((err: unknown): ToolVerdict[] =>
          calls.map(() => ({ action: 'block', reason: `a tool-call judge failed: ${(err as Error).message}`, rule: 'judge_failure', source: 'wasm' })),
        ),
      ),
    );
    return calls.map((_, i) => all.map((verdicts) => verdicts[i] ?? ALLOW).find((v) => v.action !== 'allow') ?? ALLOW);
  }
}

/** The text the agent reads in place of a refused tool call (the seed's BLOCKED / HELD prefixes). */
export function toolCallNotice(call: Pick<ToolCall, 'name'>, verdict: RefusedVerdict): string {
  return verdict.action === 'hold'
    ? `[Svc Governance] HELD: the ${call.name} tool call awaits a person's approval (rule ${verdict.rule}: ${verdict.reason}). It was not run; do not retry it until it is approved.`
    : `[Svc Governance] BLOCKED: the ${call.name} tool call was blocked by rule ${verdict.rule}: ${verdict.reason}. It was not run.`;
}

function toolCallRecord(call: ToolCall, verdict: RefusedVerdict, substituted: boolean): ToolCallRecord {
  return { id: call.id, name: call.name, action: verdict.action, rule: verdict.rule, source: verdict.source, reason: verdict.reason, substituted };
}
