import type { RuleAction, RuleContext } from './abi.js';
import { FuelExhaustedError, hasMeteringExports } from './fuel.js';
import { RuleInstance, Subject } from './instance.js';
import type { MeteredModule } from './metering.js';
import type { RuleRef, RuleSetSnapshot } from './snapshot.js';

export type FailurePolicy = 'closed' | 'open';

export interface RuleFailure {
  readonly index: number;
  readonly error: string;
  /** The rule ran out of fuel (rather than trapping, failing to load or answering nonsense). */
  readonly exhausted: boolean;
}

export interface EvaluationResult {
  /** The deciding rule, or null when every rule allowed. `failed`: the rule failed and the policy is fail closed. */
  readonly verdict: { readonly index: number; readonly action: Exclude<RuleAction, 'allow'>; readonly reason: string; readonly failed: boolean } | null;
  /** Rules that failed (and, failing open, were skipped). */
  readonly failures: readonly RuleFailure[];
}

/** A rule that loaded, with the kinds of call it evaluates and the programs it judges (null: every tool call); or why it did not. */
export type RuleCheck = { readonly kinds: number; readonly programs: readonly string[] | null } | { readonly error: string };

export interface RuleInstancesOptions {
  readonly memoryCapPages: number;
  /** Fuel per rule per call (and per instantiation). */
  readonly fuel: number;
  /** The compiled module of a rule: its metered form. */
  readonly moduleOf: (ref: RuleRef) => MeteredModule | undefined;
}

/**
 * The instantiated rules of one runner, one instance per module, kept between calls (its memory
 * with it, within the cap). Once the rule set's generation changes, the instances of rules no
 * longer loaded are dropped; a trapped instance is dropped at once and the next call starts a
 * fresh one.
 */
export class RuleInstances {
  private readonly instances = new Map<string, RuleInstance>();
  private liveGeneration = '';
  /** Calls the instances no longer kept answered from their memos. */
  private rememberedByDropped = 0;

  constructor(private readonly options: RuleInstancesOptions) {}

  get size(): number {
    return this.instances.size;
  }

  /** Rule evaluations answered from a remembered verdict, by every instance made. */
  get remembered(): number {
    let total = this.rememberedByDropped;
    for (const instance of this.instances.values()) total += instance.remembered;
    return total;
  }

  /** The instance of `ref`; throws RuleLoadError (or another Error) when it cannot be made. */
  instanceFor(ref: RuleRef): RuleInstance {
    let instance = this.instances.get(ref.sha256);
    if (instance === undefined) {
      const compiled = this.options.moduleOf(ref);
      if (compiled === undefined) throw new Error('it has not been metered');
      if ('error' in compiled) throw new Error(`it cannot be metered: ${compiled.error}`);
      // Never run code without a budget here: this is the thread that serves every request.
      if (!hasMeteringExports(compiled.module)) throw new Error('its metered form has no fuel');
      instance = new RuleInstance(compiled.module, compiled.memory, this.options.memoryCapPages, this.options.fuel);
      this.instances.set(ref.sha256, instance);
    }
    return instance;
  }

  drop(ref: RuleRef): void {
    this.forget(ref.sha256);
  }

  /** Drops what belongs to rules no longer loaded, once the generation changes. */
  forgetRemoved(set: RuleSetSnapshot): void {
    if (set.generation === this.liveGeneration) return;
    this.liveGeneration = set.generation;
    const live = new Set(set.live);
    for (const sha of this.instances.keys()) if (!live.has(sha)) this.forget(sha);
  }

  clear(): void {
    for (const sha of this.instances.keys()) this.forget(sha);
  }

  private forget(sha: string): void {
    this.rememberedByDropped += this.instances.get(sha)?.remembered ?? 0;
    this.instances.delete(sha);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const NO_FAILURES: readonly RuleFailure[] = Object.freeze([]);
const ALL_ALLOWED: EvaluationResult = Object.freeze({ verdict: null, failures: NO_FAILURES });

/**
 * The verdict of `set` on one call: the rules in order, the first non-allow verdict wins; a rule
 * that declares the programs it judges is not run on a tool call that cannot run one. A rule
 * that fails (cannot load, traps, runs out of fuel, overflows its stack, answers nonsense) is
 * reported; fail closed, it blocks; fail open, the next rules decide.
 */
export function evaluateRules(rules: RuleInstances, set: RuleSetSnapshot, context: RuleContext, failurePolicy: FailurePolicy): EvaluationResult {
  rules.forgetRemoved(set);
  const subject = new Subject(context);
  let failures: RuleFailure[] | null = null;
  const refs = set.rules;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    try {
      const instance = rules.instanceFor(ref);
      if (instance.programs !== null && !subject.mayRun(instance.programs)) continue;
      const outcome = instance.evaluate(subject);
      if (outcome.action !== 'allow') return { verdict: { index: i, action: outcome.action, reason: outcome.reason, failed: false }, failures: failures ?? NO_FAILURES };
    } catch (err) {
      // A trapped instance may hold corrupt state: the next evaluation starts from a fresh one.
      rules.drop(ref);
      const error = describe(err);
      (failures ??= []).push({ index: i, error, exhausted: err instanceof FuelExhaustedError });
      if (failurePolicy === 'closed') return { verdict: { index: i, action: 'block', reason: `rule failed: ${error}`, failed: true }, failures };
    }
  }
  return failures === null ? ALL_ALLOWED : { verdict: null, failures };
}

/** Instantiates every rule of `set` (its start code runs, metered) and checks its ABI: per rule, its kinds and programs or why it cannot load. */
export function checkRules(rules: RuleInstances, set: RuleSetSnapshot): RuleCheck[] {
  return set.rules.map((ref) => {
    try {
      const instance = rules.instanceFor(ref);
      return { kinds: instance.kinds, programs: instance.programs?.names ?? null };
    } catch (err) {
      rules.drop(ref);
      return { error: describe(err) };
    }
  });
}
