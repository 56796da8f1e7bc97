import { asBuffer } from '../lib/bytes.js';
import { GovernanceUnavailableError, InvalidRequestError } from '../lib/errors.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import type { InspectionResult } from '../policy/task.js';
import type { DecideRuntime } from '../decide/runtime.js';
import {
  answerDecision,
  answerEval,
  checkModel,
  decisionJson,
  decisionRequestSchema,
  evalJson,
  evalRequestSchema,
  parseOrThrow,
} from '../decide/traffic.js';
import type { DecisionTrafficSettings } from '../decide/traffic-settings.js';
import type { Exchange } from './exchange.js';
import { policyRefusal } from './server.js';

export const DECISION_ROUTES = { decide: '/v1/decisions', eval: '/v1/decisions/eval' } as const;
export type DecisionRoute = keyof typeof DECISION_ROUTES;

export interface DecisionContext {
  readonly decide: DecideRuntime | null;
  readonly policy: PolicyConfig;
  readonly settings: DecisionTrafficSettings;
  readonly inspect: (policy: PolicyConfig, parsed: unknown, raw: Buffer) => Promise<InspectionResult>;
}

/**
 * Decision traffic, answered by the proxy itself: the body passes DLP like any request (a block
 * pattern refuses, a redaction is what the model sees), the decision model must be pinned, then
 * the decide engine answers. `decision_traffic.mode: shadow` reports instead of refusing.
 */
export async function answerDecisionTraffic(ex: Exchange, route: DecisionRoute, raw: Buffer, ctx: DecisionContext): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('The request body is not valid JSON.');
  }
  if (route === 'decide') parseOrThrow(decisionRequestSchema, body);
  else parseOrThrow(evalRequestSchema, body);
  if (ctx.decide === null) throw new GovernanceUnavailableError('no decide engine is configured');
  const engine = ctx.decide.engine;
  ex.model = engine.model;
  const warnings = checkModel(engine, (body as { model?: string }).model, ctx.settings);

  const inspection = await ctx.inspect(ctx.policy, body, raw);
  ex.findings.push(...inspection.findings);
  if (inspection.blockedBy !== null) {
    if (ctx.settings.mode === 'enforce' && !inspection.shadow) {
      ex.enforcement = 'KILL';
      throw policyRefusal(inspection.blockedBy);
    }
    warnings.push(`would_block:${inspection.blockedBy.detector}`);
  }
  if (inspection.verdict === 'modified') ex.enforcement = 'ENHANCE';
  const inspected: unknown = inspection.body !== null ? JSON.parse(asBuffer(inspection.body).toString('utf8')) : body;
  if (ex.gone) return;
  if (route === 'decide') {
    const decision = await answerDecision(engine, parseOrThrow(decisionRequestSchema, inspected), ex.headers.harness);
    ex.replyJson(200, decisionJson(decision, ex.id, warnings));
  } else {
    const result = await answerEval(engine, parseOrThrow(evalRequestSchema, inspected));
    ex.replyJson(200, evalJson(result, ex.id, warnings));
  }
}
