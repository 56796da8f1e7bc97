import { z } from 'zod';
import { InvalidRequestError, PolicyBlockedError, SvcError } from '../lib/errors.js';
import { runEval, type EvalResult } from './eval.js';
import { toolCallSubject, type ActiveRule, type DecideEngine, type RuleDecision } from './evaluate.js';
import { compileRecord, questionsSchema } from './record.js';
import { INTERACTIVE_HARNESSES } from './tool-judge.js';
import type { DecisionTrafficSettings } from './traffic-settings.js';


const SUBJECT_LIMIT = 256 * 1024;

const subjectSchema = z.union([
  z.string().min(1).max(SUBJECT_LIMIT),
  z.strictObject({ tool: z.string().min(1).max(256), arguments: z.union([z.string().max(SUBJECT_LIMIT), z.record(z.string(), z.unknown())]) }),
]);

export const decisionRequestSchema = z
  .strictObject({
    rule: z.string().min(1).max(128).optional(),
    questions: questionsSchema.optional(),
    /** For an inline question set; defaults to every question being yes. */
    when: z.string().min(1).max(2000).optional(),
    subject: subjectSchema,
    model: z.string().min(1).max(256).optional(),
    can_ask_person: z.boolean().optional(),
  })
  .refine((b) => (b.rule === undefined) !== (b.questions === undefined), { message: 'name a rule or give questions, not both', path: ['rule'] })
  .refine((b) => b.when === undefined || b.questions !== undefined, { message: 'when goes with an inline question set', path: ['when'] });

export const evalRequestSchema = z.strictObject({
  rule: z.string().min(1).max(128),
  cases: z.array(z.strictObject({ subject: subjectSchema, expect: z.enum(['refuse', 'allow', 'escalate']) })).min(1).max(1000),
  min_accuracy: z.number().min(0).max(1).default(0.9),
  model: z.string().min(1).max(256).optional(),
});

export type DecisionRequest = z.infer<typeof decisionRequestSchema>;

/**
 * A model with a pinned version: a digest (`@sha256:…`, `@v3`), a non-floating tag (`:7b-q4`),
 * or a dated snapshot (`-2024-08-06`, `-20240806`). Bare names and `latest`-style tags float.
 */
export function isPinnedModel(model: string): boolean {
  if (/@[A-Za-z0-9][\w.:+-]*$/.test(model)) return true;
  const tag = /:([\w.+-]+)$/.exec(model)?.[1];
  if (tag !== undefined) return !['latest', 'stable', 'default', 'main', 'current'].includes(tag.toLowerCase());
  return /-\d{4}-\d{2}-\d{2}$/.test(model) || /-\d{8}$/.test(model);
}

export function subjectText(subject: z.infer<typeof subjectSchema>): string {
  if (typeof subject === 'string') return subject;
  return toolCallSubject(subject.tool, typeof subject.arguments === 'string' ? subject.arguments : JSON.stringify(subject.arguments));
}

export class DecideUnavailableError extends SvcError {
  constructor(decision: RuleDecision) {
    super(`Decide governance is unavailable for rule '${decision.rule}' (${decision.unavailable}): ${decision.reason}`, {
      code: 'governance_unavailable',
      status: 503,
      type: 'api_error',
      headers: { 'retry-after': '5' },
    });
  }
}

export function parseOrThrow<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.') || null;
  throw new InvalidRequestError(field ? `Invalid '${field}': ${issue.message}` : issue.message, field);
}

/**
 * The model-version check of decision traffic: the decision's model must be the engine's, and
 * pinned unless `decision_traffic` relaxes it. Returns the warnings to report.
 */
export function checkModel(engine: DecideEngine, requested: string | undefined, settings: DecisionTrafficSettings): string[] {
  const model = requested ?? engine.model;
  if (model === null) return [];
  if (engine.model !== null && model !== engine.model) {
    throw new InvalidRequestError(`This gateway's decide engine serves '${engine.model}', not '${model}'.`, 'model', 'model_not_served');
  }
  if (isPinnedModel(model)) return [];
  if (settings.mode === 'shadow' || settings.allow_unpinned) return ['unpinned_model'];
  throw new PolicyBlockedError(
    `The decision model '${model}' has no pinned version (a floating alias); pin a version or digest, or set decision_traffic.allow_unpinned during a migration.`,
    'policy_denied',
  );
}

function loadedRule(engine: DecideEngine, id: string): ActiveRule {
  const found = engine.find(id);
  if (found === undefined) throw new InvalidRequestError(`No decide rule '${id}' is loaded.`, 'rule', 'rule_not_found');
  return found;
}

function ruleFor(engine: DecideEngine, body: DecisionRequest): ActiveRule {
  if (body.rule !== undefined) return loadedRule(engine, body.rule);
  const questions = body.questions!;
  const compiled = compileRecord({ id: 'inline', on: 'response', questions, when: body.when ?? Object.keys(questions).join(' and ') }, 'request');
  if (!compiled.ok) throw new InvalidRequestError(`Invalid question set: ${compiled.problems[0]}`, 'when');
  return { rule: compiled.rule, stamp: 'shadow', pinnedP95Ms: undefined };
}

/** The wire shape of one decision. */
export function decisionJson(d: RuleDecision, traceId: string, warnings: readonly string[]): object {
  return {
    object: 'decision',
    id: traceId,
    rule: d.rule,
    rule_hash: d.ruleHash,
    rollout: d.stamp,
    outcome: d.outcome,
    code: d.code,
    questions: Object.fromEntries(Object.entries(d.answers).map(([name, a]) => [name, { p_yes: a.pYes, answer: a.answer }])),
    ...(d.score === undefined ? {} : { score: d.score }),
    model: d.model,
    latency_ms: d.latencyMs,
    cached: d.cached,
    reason: d.reason,
    warnings,
  };
}

/** POST /v1/decisions, after DLP: evaluates the rule or question set against the subject. */
export async function answerDecision(engine: DecideEngine, body: DecisionRequest, harness: string | null): Promise<RuleDecision> {
  const active = ruleFor(engine, body);
  const canAskPerson = body.can_ask_person ?? (harness !== null && INTERACTIVE_HARNESSES.has(harness));
  const decision = await engine.evaluate(active, subjectText(body.subject), { canAskPerson });
  if (decision.outcome === 'unavailable') throw new DecideUnavailableError(decision);
  return decision;
}

/** POST /v1/decisions/eval: runs a loaded rule over labelled cases. */
export function answerEval(engine: DecideEngine, body: z.infer<typeof evalRequestSchema>): Promise<EvalResult> {
  const active = loadedRule(engine, body.rule);
  return runEval(engine, active, body.cases.map((c) => ({ subject: subjectText(c.subject), expect: c.expect })), body.min_accuracy);
}

export function evalJson(r: EvalResult, traceId: string, warnings: readonly string[]): object {
  return {
    object: 'decision.eval',
    id: traceId,
    rule: r.rule,
    rule_hash: r.ruleHash,
    model: r.model,
    accuracy: r.accuracy,
    p95_ms: r.p95Ms,
    passed: r.passed,
    failure: r.failure,
    cases: r.cases.map((c) => ({ index: c.index, expect: c.expect, outcome: c.outcome, correct: c.correct, latency_ms: c.latencyMs })),
    warnings,
  };
}
