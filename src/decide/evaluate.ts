import type { Logger } from '../lib/logger.js';
import { answerFor, meanLogitScore, type Band } from './band.js';
import { AnswerCache } from './cache.js';
import { runCanary } from './canary.js';
import { isSelfHosted, type EngineConfig } from './engine-config.js';
import { RuleLatencies } from './latency.js';
import { EngineUnavailable, ModelClient, type EngineFailure } from './model-client.js';
import { stampFor, type Pins, type Stamp } from './pins.js';
import type { DecideRule } from './record.js';
import { evaluateWhen, type Answer } from './when.js';

/** At most this many enforcing rules may name one tool; past it the tool's rules are unavailable. */
export const MAX_ENFORCING_RULES_PER_TOOL = 4;

export type Outcome = 'refuse' | 'allow' | 'escalate' | 'unavailable';
export type DecideCode = 'DECIDE_REFUSED' | 'DECIDE_ESCALATED' | 'GOVERNANCE_UNAVAILABLE';

export interface QuestionAnswer {
  readonly pYes: number | null;
  readonly answer: Answer;
}

export interface RuleDecision {
  readonly rule: string;
  readonly ruleHash: string;
  readonly stamp: Stamp;
  readonly outcome: Outcome;
  /** What the outcome means for the caller: null for allow, and for an escalation a person can take. */
  readonly code: DecideCode | null;
  readonly answers: Readonly<Record<string, QuestionAnswer>>;
  /** The legacy judge's combined score; absent for `when` rules. */
  readonly score?: number;
  readonly model: string | null;
  readonly latencyMs: number;
  readonly cached: boolean;
  readonly reason: string;
  readonly unavailable: EngineFailure | null;
}

/** A rule with its rollout decided for this engine's model. */
export interface ActiveRule {
  readonly rule: DecideRule;
  readonly stamp: Stamp;
  /** The pinned eval's p95, used until this process has measured its own. */
  readonly pinnedP95Ms: number | undefined;
}

export interface EvaluateOptions {
  /** Whether an escalation can wait for a person (a hold); otherwise it refuses. */
  readonly canAskPerson: boolean;
  /** Milliseconds left for this rule; the engine's timeout when the caller has no deadline. */
  readonly timeLeftMs?: number;
  readonly signal?: AbortSignal;
  /** Ask the model even when answers are cached (evals). */
  readonly fresh?: boolean;
}

/** The legacy local judge's scoring: σ(½·logit(p_a) + ½·logit(p_r1)) against its own band. */
export interface LegacyScoring {
  readonly band: Band;
}

export interface DecideEngineOptions {
  readonly config: EngineConfig;
  readonly rules: readonly DecideRule[];
  readonly pins: Pins;
  readonly logger: Logger;
  /** The rule mapped from the legacy local-judge variables, which always enforces. */
  readonly legacy?: { readonly rule: DecideRule; readonly scoring: LegacyScoring } | null;
  readonly now?: () => number;
}

/**
 * Asks decide rules' questions of the configured model server and turns the probabilities into
 * outcomes. Knows when it cannot be trusted (not configured, hosted, canary failed) and says so
 * as an `unavailable` outcome rather than guessing.
 */
export class DecideEngine {
  readonly active: readonly ActiveRule[];
  private readonly client: ModelClient | null;
  private readonly configProblem: { reason: EngineFailure; detail: string } | null;
  private readonly cache: AnswerCache;
  private readonly latencies = new RuleLatencies();
  private canary: Promise<void> | null = null;
  /** The last canary's failure, null when it passed, undefined before the first one answered. */
  private canaryFailure: string | null | undefined = undefined;
  private canaryTimer: NodeJS.Timeout | null = null;
  private readonly legacyHash: string | null;
  private readonly legacyScoring: LegacyScoring | null;
  private readonly now: () => number;

  constructor(private readonly options: DecideEngineOptions) {
    const { config } = options;
    this.now = options.now ?? Date.now;
    this.cache = new AnswerCache(config.cacheTtlMs);
    this.active = options.rules.map((rule) => ({
      rule,
      stamp: stampFor(rule, options.pins, config.model),
      pinnedP95Ms: options.pins[rule.record.id]?.ruleHash === rule.hash ? options.pins[rule.record.id]!.p95Ms : undefined,
    }));
    if (options.legacy) this.active = [...this.active, { rule: options.legacy.rule, stamp: 'enforce', pinnedP95Ms: undefined }];
    this.legacyHash = options.legacy?.rule.hash ?? null;
    this.legacyScoring = options.legacy?.scoring ?? null;
    if (config.url === null || config.model === null) {
      this.configProblem = { reason: 'not_configured', detail: 'no decide engine is configured (url and model)' };
    } else if (!isSelfHosted(config.url, config.selfHostedHosts)) {
      this.configProblem = { reason: 'host_not_self_hosted', detail: `${new URL(config.url).hostname} is a hosted decision API, not a self-hosted model server` };
    } else {
      this.configProblem = null;
    }
    this.client = this.configProblem === null ? new ModelClient({ url: config.url!, model: config.model!, apiKey: config.apiKey }) : null;
  }

  get model(): string | null {
    return this.options.config.model;
  }

  get timeoutMs(): number {
    return this.options.config.timeoutMs;
  }

  /** Runs the known-answer canary now and then every canary interval. */
  start(): Promise<void> {
    if (this.client === null) return Promise.resolve();
    this.canaryTimer = setInterval(() => void this.checkCanary(), this.options.config.canaryIntervalMs);
    this.canaryTimer.unref();
    return this.checkCanary();
  }

  /** Asks the canary questions once; the result holds until the next check. */
  checkCanary(): Promise<void> {
    const client = this.client;
    if (client === null) return Promise.resolve();
    const { canaries, band, timeoutMs } = this.options.config;
    this.canary = runCanary(client, canaries, band, timeoutMs).then((result) => {
      const failure = result.passed ? null : result.detail;
      if (failure !== this.canaryFailure) {
        if (failure !== null) this.options.logger.error({ detail: failure }, 'decide engine failed its known-answer canary; enforcing rules are unavailable');
        else if (this.canaryFailure !== undefined) this.options.logger.info('decide engine passed its known-answer canary again');
      }
      this.canaryFailure = failure;
    });
    return this.canary;
  }

  async close(): Promise<void> {
    if (this.canaryTimer !== null) clearInterval(this.canaryTimer);
    await this.canary?.catch(() => undefined);
    await this.client?.close();
  }

  find(id: string): ActiveRule | undefined {
    return this.active.find((a) => a.rule.record.id === id);
  }

  /** The rules that judge a tool call to `tool`. */
  toolRules(tool: string): ActiveRule[] {
    return this.active.filter((a) => a.rule.record.on === 'tool_call' && a.rule.record.tools.includes(tool));
  }

  responseRules(): ActiveRule[] {
    return this.active.filter((a) => a.rule.record.on === 'response');
  }

  /** Why no enforcing rule can be evaluated right now, or null. */
  private async availability(): Promise<{ reason: EngineFailure; detail: string } | null> {
    if (this.configProblem !== null) return this.configProblem;
    // Only the first canary is waited for; later ones run alongside traffic, which keeps the last result.
    if (this.canary === null) await this.checkCanary();
    else if (this.canaryFailure === undefined) await this.canary;
    return this.canaryFailure == null ? null : { reason: 'canary_failed', detail: this.canaryFailure };
  }

  /** Evaluates one rule about one subject. Never rejects on an engine fault: that is an `unavailable` outcome. */
  async evaluate(active: ActiveRule, subject: string, opts: EvaluateOptions): Promise<RuleDecision> {
    const started = performance.now();
    const { rule, stamp } = active;
    const base = { rule: rule.record.id, ruleHash: rule.hash, stamp };
    const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
    const unavailable = (reason: EngineFailure, detail: string): RuleDecision => ({
      ...base,
      outcome: 'unavailable',
      code: 'GOVERNANCE_UNAVAILABLE',
      answers: {},
      model: this.model,
      latencyMs: elapsed(),
      cached: false,
      reason: detail,
      unavailable: reason,
    });

    const problem = await this.availability();
    if (problem !== null) return unavailable(problem.reason, problem.detail);
    if (stamp === 'enforce' && rule.record.on === 'tool_call') {
      for (const tool of rule.record.tools) {
        const enforcing = this.toolRules(tool).filter((a) => a.stamp === 'enforce').length;
        if (enforcing > MAX_ENFORCING_RULES_PER_TOOL) {
          return unavailable('too_many_enforcing_rules', `${enforcing} enforcing rules name the tool ${tool}; at most ${MAX_ENFORCING_RULES_PER_TOOL} may`);
        }
      }
    }

    const names = Object.keys(rule.record.questions);
    const timeLeft = Math.min(this.timeoutMs, opts.timeLeftMs ?? this.timeoutMs);
    let pYes: Record<string, number>;
    let model: string;
    let cached = false;
    const hit = opts.fresh === true ? undefined : this.cache.get(rule.hash, subject, this.now());
    if (hit !== undefined) {
      ({ pYes, model } = hit);
      cached = true;
    } else {
      const p95 = this.latencies.p95(rule.hash, active.pinnedP95Ms);
      if (opts.fresh !== true && p95 !== undefined && p95 > timeLeft) {
        return this.escalated(base, opts, {}, elapsed(), `the rule's p95 of ${Math.round(p95)} ms does not fit the ${Math.round(timeLeft)} ms left`, rule.record.escalate);
      }
      const abort = new AbortController();
      const signal = opts.signal === undefined ? abort.signal : AbortSignal.any([abort.signal, opts.signal]);
      try {
        const answers = await Promise.all(
          names.map((name) =>
            this.client!.askYesNo(rule.record.questions[name]!.ask, subject, timeLeft, signal).catch((err: unknown) => {
              abort.abort();
              throw err;
            }),
          ),
        );
        pYes = Object.fromEntries(names.map((n, i) => [n, answers[i]!.pYes]));
        model = answers[0]!.model;
      } catch (err) {
        if (err instanceof EngineUnavailable) return unavailable(err.reason, err.message);
        throw err;
      }
      this.latencies.record(rule.hash, performance.now() - started);
      this.cache.set(rule.hash, subject, { pYes, model }, this.now());
    }

    const band = this.options.config.band;
    const answers: Record<string, QuestionAnswer> = {};
    for (const name of names) answers[name] = { pYes: pYes[name]!, answer: answerFor(pYes[name]!, band) };

    let truth: boolean | 'unknown';
    let score: number | undefined;
    if (rule.hash === this.legacyHash && this.legacyScoring !== null) {
      score = meanLogitScore(pYes.a!, pYes.r1!);
      const verdict = answerFor(score, this.legacyScoring.band);
      truth = verdict === 'yes' ? true : verdict === 'no' ? false : 'unknown';
    } else {
      truth = evaluateWhen(rule.when, Object.fromEntries(names.map((n) => [n, answers[n]!.answer])));
    }
    const latencyMs = elapsed();
    const extra = { model, cached, ...(score === undefined ? {} : { score }) };
    if (truth === true) {
      return { ...base, ...extra, outcome: 'refuse', code: 'DECIDE_REFUSED', answers, latencyMs, reason: `the answers make the rule's condition true (${rule.record.when})`, unavailable: null };
    }
    if (truth === false) return { ...base, ...extra, outcome: 'allow', code: null, answers, latencyMs, reason: 'the answers make the rule\'s condition false', unavailable: null };
    return { ...this.escalated(base, opts, answers, latencyMs, `the answers leave the rule's condition unknown (${rule.record.when})`, rule.record.escalate), ...extra };
  }

  private escalated(
    base: Pick<RuleDecision, 'rule' | 'ruleHash' | 'stamp'>,
    opts: EvaluateOptions,
    answers: Record<string, QuestionAnswer>,
    latencyMs: number,
    reason: string,
    escalate: 'ask' | 'refuse',
  ): RuleDecision {
    const refuses = escalate === 'refuse' || !opts.canAskPerson;
    return { ...base, outcome: 'escalate', code: refuses ? 'DECIDE_ESCALATED' : null, answers, model: this.model, latencyMs, cached: false, reason, unavailable: null };
  }
}

/** How a tool call is put to the model: its name, then its arguments as emitted. */
export function toolCallSubject(name: string, args: string): string {
  return `Tool: ${name}\nArguments: ${args}`;
}
