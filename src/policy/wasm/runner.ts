import type { Logger } from '../../lib/logger.js';
import type { RuleAction, RuleContext } from './abi.js';
import { checkRules, evaluateRules, RuleInstances, type EvaluationResult, type FailurePolicy, type RuleCheck } from './evaluator.js';
import { DEFAULT_FUEL } from './fuel.js';
import { meteredEvictions, meteredModule, meterRules, type MeteredModule } from './metering.js';
import type { RuleSetSnapshot } from './snapshot.js';

export interface RuleRunnerOptions {
  /** Fuel per rule per call, and for starting it (docs/wasm-rules.md); default DEFAULT_FUEL. */
  fuel?: number;
  memoryCapPages: number;
  failurePolicy: FailurePolicy;
  logger: Logger;
}

/** The combined verdict of a rule set over one call. */
export interface RuleDecision {
  readonly action: RuleAction;
  /** The deciding rule's name (null when every rule allowed). */
  readonly rule: string | null;
  readonly reason: string;
  /** Rules that failed on this call: trapped, ran out of fuel, outgrew their memory, could not be loaded. */
  readonly failures: ReadonlyArray<{ readonly rule: string; readonly error: string }>;
}

export interface RuleRunnerState {
  /** Calls evaluated. */
  readonly completed: number;
  /** Rule runs stopped because they ran out of fuel. */
  readonly fuelExhausted: number;
  /** Rule instances currently kept. */
  readonly instances: number;
  /** Rule evaluations answered from a verdict the rule reached before on the same answers (verdict-memo.ts). */
  readonly remembered: number;
}

const ALL_ALLOWED: RuleDecision = Object.freeze({ action: 'allow', rule: null, reason: '', failures: Object.freeze([]) });

/**
 * Runs WASM rules inline, on the calling thread. Every module is metered before it runs (binaryen
 * in a child process, once per module, see metering.ts) and each rule gets `fuel` units per call, so a
 * rule that would loop forever is stopped, deterministically, and counts as failed. Instances are
 * kept per module between calls.
 */
export class WasmRuleRunner {
  private readonly rules: RuleInstances;
  private readonly fuel: number;
  private completed = 0;
  private fuelExhausted = 0;
  /** Metering outcomes the process does not keep (the metering process failed), for the one call that asked. */
  private readonly transient = new Map<string, MeteredModule>();
  /** Sets found `ready`, with the metering cache's evictions then: each is looked up once, not on every call. */
  private readonly readySets = new WeakMap<RuleSetSnapshot, number>();

  constructor(private readonly options: RuleRunnerOptions) {
    this.fuel = options.fuel ?? DEFAULT_FUEL;
    this.rules = new RuleInstances({
      memoryCapPages: options.memoryCapPages,
      fuel: this.fuel,
      moduleOf: (ref) => meteredModule(ref.sha256) ?? this.transient.get(ref.sha256),
    });
  }

  /** The verdict of `set` on one call; never rejects (a failing rule answers per the failure policy). */
  async evaluate(set: RuleSetSnapshot, context: RuleContext): Promise<RuleDecision> {
    if (this.ready(set)) return this.evaluateNow(set, context);
    return this.decide(set, this.withMetered(set, await meterRules(set), () => evaluateRules(this.rules, set, context, this.options.failurePolicy)));
  }

  /** Whether every rule of `set` is metered: `evaluateNow` can then answer. */
  ready(set: RuleSetSnapshot): boolean {
    const evictions = meteredEvictions();
    if (this.readySets.get(set) === evictions) return true;
    for (const ref of set.rules) if (meteredModule(ref.sha256) === undefined) return false;
    this.readySets.set(set, evictions);
    return true;
  }

  /** The verdict of a `ready` set on one call, at once; never throws (a failing rule answers per the failure policy). */
  evaluateNow(set: RuleSetSnapshot, context: RuleContext): RuleDecision {
    return this.decide(set, evaluateRules(this.rules, set, context, this.options.failurePolicy));
  }

  /** Meters and instantiates every rule of `set`: per rule, the kinds it evaluates or why it cannot load. */
  async check(set: RuleSetSnapshot): Promise<RuleCheck[]> {
    return this.withMetered(set, await meterRules(set), () => checkRules(this.rules, set));
  }

  state(): RuleRunnerState {
    return { completed: this.completed, fuelExhausted: this.fuelExhausted, instances: this.rules.size, remembered: this.rules.remembered };
  }

  /** Drops the instances (metered modules stay cached for the process). */
  close(): Promise<void> {
    this.rules.clear();
    return Promise.resolve();
  }

  private withMetered<T>(set: RuleSetSnapshot, metered: readonly MeteredModule[], run: () => T): T {
    set.rules.forEach((ref, i) => this.transient.set(ref.sha256, metered[i]!));
    try {
      return run();
    } finally {
      this.transient.clear();
    }
  }

  private decide(set: RuleSetSnapshot, result: EvaluationResult): RuleDecision {
    this.completed++;
    if (result.verdict === null && result.failures.length === 0) return ALL_ALLOWED;
    const failures = result.failures.map((f) => {
      const rule = set.rules[f.index]!.name;
      if (f.exhausted) this.fuelExhausted++;
      this.options.logger.warn({ rule, error: f.error }, 'WASM rule failed');
      return { rule, error: f.error };
    });
    if (result.verdict === null) return { action: 'allow', rule: null, reason: '', failures };
    return { action: result.verdict.action, rule: set.rules[result.verdict.index]!.name, reason: result.verdict.reason, failures };
  }
}
