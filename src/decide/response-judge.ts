import type { Logger } from '../lib/logger.js';
import type { DecideEngine, RuleDecision } from './evaluate.js';

export type NoteVerdict = 'VIOLATION' | 'AMBIGUOUS';

/** What the gateway writes into a response an enforcing `on: response` rule did not clear. */
export interface ResponseNote {
  readonly verdict: NoteVerdict;
  readonly rule: string;
  /** The full note, as appended to the response text. */
  readonly text: string;
}

export interface ResponseContext {
  readonly traceId: string;
  /** Receives every decision about this response, shadow ones included. */
  readonly record?: (decision: RuleDecision) => void;
}

/** Writes the note body of a VIOLATION; the legacy free-text judge supplies its own. */
export type NoteWriter = (decision: RuleDecision, responseText: string) => Promise<string | null>;

export interface ResponseJudgeOptions {
  readonly logger: Logger;
  readonly violationNote?: NoteWriter;
}

const PREFIX = '[Svc Governance]';

/**
 * Judges a complete response with every `on: response` rule. A refusal by an enforcing rule is a
 * VIOLATION note; an escalation, or an enforcing rule that could not be evaluated, an AMBIGUOUS
 * one (the response already exists: the gateway can only say it was not cleared). Shadow rules
 * only report.
 */
export class ResponseJudge {
  constructor(
    private readonly engine: DecideEngine,
    private readonly options: ResponseJudgeOptions,
  ) {}

  get active(): boolean {
    return this.engine.responseRules().length > 0;
  }

  async judge(responseText: string, ctx: ResponseContext): Promise<ResponseNote | null> {
    const rules = this.engine.responseRules();
    if (rules.length === 0 || responseText.trim().length === 0) return null;
    const decisions = await Promise.all(rules.map((a) => this.engine.evaluate(a, responseText, { canAskPerson: false })));
    let ambiguous: ResponseNote | null = null;
    for (const decision of decisions) {
      ctx.record?.(decision);
      if (decision.stamp === 'shadow' || decision.outcome === 'allow') continue;
      if (decision.outcome === 'refuse') {
        const body = (await this.options.violationNote?.(decision, responseText)) ?? `this response breaks the SOP behind decide rule '${decision.rule}'.`;
        return { verdict: 'VIOLATION', rule: decision.rule, text: `${PREFIX} VIOLATION (${decision.rule}): ${body}` };
      }
      const why =
        decision.outcome === 'unavailable'
          ? `decide rule '${decision.rule}' could not be evaluated (${decision.unavailable}); this response was not checked against its SOP.`
          : `decide rule '${decision.rule}' could not tell whether this response follows its SOP; review it before acting on it.`;
      if (decision.outcome === 'unavailable') this.options.logger.warn({ traceId: ctx.traceId, rule: decision.rule, reason: decision.unavailable }, 'decide response rule could not be evaluated');
      ambiguous ??= { verdict: 'AMBIGUOUS', rule: decision.rule, text: `${PREFIX} AMBIGUOUS (${decision.rule}): ${why}` };
    }
    return ambiguous;
  }
}
