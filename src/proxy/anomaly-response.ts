import { AnomalyKilledError } from '../lib/errors.js';
import { appendCard } from '../policy/anomaly/card.js';
import { answerContinues } from '../policy/anomaly/continuation.js';
import type { AnomalyDecision } from '../policy/anomaly/guard.js';
import { AnomalySessions, LocalSessionJudge, type SessionJudge } from '../policy/anomaly/sessions.js';
import type { Inspection } from '../policy/inspect.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import type { TraceRecord } from '../traces/trace.js';
import type { Exchange } from './exchange.js';
import type { RouteKind } from './routes.js';

/** Routes whose bodies carry an agent's conversation and its tool calls. */
const CONVERSATION_ROUTES: ReadonlySet<RouteKind> = new Set(['chat', 'responses', 'messages']);

/** What the request path does about a request's anomalies (a kill has already been thrown). */
export interface AnomalyPlan {
  /** The body to send instead of the inspected one: the card appended (steer, or a reask on a stream). */
  readonly steered: string | null;
  /** A reask: the card version, kept for when the model's answer continues the loop. */
  readonly reask: { readonly body: string; readonly decision: AnomalyDecision } | null;
}

const NOTHING: AnomalyPlan = { steered: null, reask: null };

/**
 * The anomaly responses on the request path: judges each inspection's anomaly report against the
 * session's memory, records it on the exchange, refuses (kill), appends the card (steer), or
 * arranges for the model's answer to be tested (reask).
 */
export class AnomalyResponder {
  /** What answers discarded by a reask cost; added to the request's own when it settles. */
  private readonly discarded = new WeakMap<Exchange, { inputTokens: number; outputTokens: number; costUsd: number }>();

  constructor(private readonly sessions: SessionJudge = new LocalSessionJudge()) {}

  /** Rejects with AnomalyKilledError when the response is kill. */
  async plan(ex: Exchange, kind: RouteKind, policy: PolicyConfig, inspection: Inspection, inspectedBody: Buffer | string): Promise<AnomalyPlan> {
    const report = inspection.anomaly;
    if (report === null || !CONVERSATION_ROUTES.has(kind)) return NOTHING;
    // Nothing found and no tool offered: the session's memory has nothing to add or remember.
    if (report.findings.length === 0 && isEmpty(report.toolPins)) return NOTHING;
    const key = AnomalySessions.key(ex.workspace, ex.headers.session, report);
    const decision = await this.sessions.decide(key, policy.anomaly, { findings: report.findings, toolPins: report.toolPins }, inspection.shadow);
    if (decision.findings.length === 0) return NOTHING;
    ex.anomaly = { mode: decision.mode, findings: decision.findings, response: decision.response, outcome: null, card: decision.card };
    if (decision.response === null) return NOTHING;
    if (decision.response === 'kill') {
      ex.anomaly.outcome = 'killed';
      ex.enforcement = 'KILL';
      throw new AnomalyKilledError(decision.acting.map((f) => `${f.detector} (${f.summary})`).join('; '));
    }
    const body = JSON.stringify(appendCard(kind, JSON.parse(inspectedBody.toString()) as Record<string, unknown>, decision.card!));
    // A stream's first tokens reach the client as they come, so there is no answer to take back:
    // a reask on a stream is carried out as a steer.
    if (decision.response === 'steer' || ex.stream) {
      ex.anomaly.outcome = 'steered';
      ex.enforcement = 'HIJACK';
      return { steered: body, reask: null };
    }
    return { steered: null, reask: { body, decision } };
  }

  /**
   * Tests the model's first answer to a reask. When it continues what drew the reask, the answer
   * is discarded (its cost kept), the trace turns HIJACK, and `askAgain` sends the card version;
   * returns whether it did.
   */
  reask(ex: Exchange, kind: RouteKind, plan: NonNullable<AnomalyPlan['reask']>, answer: Buffer, askAgain: (body: string) => void): boolean {
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.toString('utf8'));
    } catch {
      parsed = null;
    }
    if (!answerContinues(kind, parsed, plan.decision.acting)) {
      if (ex.anomaly !== null) ex.anomaly.outcome = 'answer_accepted';
      return false;
    }
    if (ex.anomaly !== null) ex.anomaly.outcome = 'reasked';
    ex.enforcement = 'HIJACK';
    this.discarded.set(ex, {
      inputTokens: ex.usage?.inputTokens ?? 0,
      outputTokens: ex.usage?.outputTokens ?? 0,
      costUsd: ex.costUsd ?? 0,
    });
    askAgain(plan.body);
    return true;
  }

  /** Adds the cost of a discarded answer to the request's (exchange and trace) as it settles. */
  settle(ex: Exchange, trace: TraceRecord): void {
    const spent = this.discarded.get(ex);
    if (spent === undefined) return;
    ex.costUsd = (ex.costUsd ?? 0) + spent.costUsd;
    trace.costUsd = ex.costUsd;
    trace.inputTokens = (trace.inputTokens ?? 0) + spent.inputTokens;
    trace.outputTokens = (trace.outputTokens ?? 0) + spent.outputTokens;
  }
}

function isEmpty(record: object): boolean {
  for (const _ in record) return false;
  return true;
}
