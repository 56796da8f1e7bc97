import { Piscina } from 'piscina';
import type { Logger } from '../../lib/logger.js';
import type { RuleAction, RuleContext } from './abi.js';
import { PROGRESS_BYTES, type CheckTask, type EvaluateTask, type EvaluationResult, type FailurePolicy, type RuleCheck, type RuleTask } from './evaluator.js';
import type { RuleSetSnapshot } from './snapshot.js';

export interface RuleRunnerOptions {
  threads: number;
  /** How long one rule may run (instantiation or evaluation) before its worker is replaced. */
  deadlineMs: number;
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
  /** Rules that failed on this call: trapped, overran their deadline, outgrew their memory. */
  readonly failures: ReadonlyArray<{ readonly rule: string; readonly error: string }>;
}

export interface RuleRunnerState {
  readonly completed: number;
  /** Workers replaced because a rule overran its deadline or killed its worker. */
  readonly workersReplaced: number;
}

const DEFAULT_WORKER = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

/**
 * A one-shot abort in the EventEmitter shape Piscina accepts for `signal`: aborting a running
 * task replaces its worker, as with an AbortSignal, at a fraction of an AbortController's cost
 * per task.
 */
class TaskAbort {
  aborted = false;
  private listener: (() => void) | null = null;

  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = null;
  }

  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}

/** A rule that overran its deadline (or took its worker down) while running. */
class RuleStoppedError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Runs WASM rules on their own Piscina pool. V8 cannot interrupt running WebAssembly, so each task
 * carries a shared progress cell the worker stamps as each rule starts; a watchdog on the main
 * thread aborts the task once the running rule is past its deadline, and Piscina replaces the
 * worker. Time a task spends queued does not count against any rule.
 */
export class WasmRuleRunner {
  private readonly pool: Piscina<RuleTask, EvaluationResult | RuleCheck[]>;
  private workersReplaced = 0;

  constructor(private readonly options: RuleRunnerOptions) {
    this.pool = new Piscina({
      filename: DEFAULT_WORKER.href,
      minThreads: options.threads,
      maxThreads: options.threads,
      idleTimeout: 60_000,
    });
    this.pool.on('error', (err: unknown) => options.logger.error({ err }, 'rule worker error'));
  }

  /** The verdict of `set` on one call; never rejects (a failing rule answers per the failure policy). */
  async evaluate(set: RuleSetSnapshot, context: RuleContext): Promise<RuleDecision> {
    const failures: Array<{ rule: string; error: string }> = [];
    let startAt = 0;
    while (startAt < set.rules.length) {
      const task: Omit<EvaluateTask, 'progress'> = {
        op: 'evaluate',
        set,
        context,
        startAt,
        failurePolicy: this.options.failurePolicy,
        memoryCapPages: this.options.memoryCapPages,
      };
      try {
        const result = (await this.run(task)) as EvaluationResult;
        for (const f of result.failures) {
          const rule = set.rules[f.index]!.name;
          failures.push({ rule, error: f.error });
          this.options.logger.warn({ rule, error: f.error }, 'WASM rule failed');
        }
        if (result.verdict === null) return { action: 'allow', rule: null, reason: '', failures };
        return { action: result.verdict.action, rule: set.rules[result.verdict.index]!.name, reason: result.verdict.reason, failures };
      } catch (err) {
        const stopped = err as RuleStoppedError;
        const rule = set.rules[stopped.index]!.name;
        failures.push({ rule, error: stopped.message });
        this.options.logger.warn({ rule, error: stopped.message }, 'WASM rule failed');
        if (this.options.failurePolicy === 'closed') return { action: 'block', rule, reason: `rule failed: ${stopped.message}`, failures };
        startAt = stopped.index + 1;
      }
    }
    return { action: 'allow', rule: null, reason: '', failures };
  }

  /** Instantiates every rule of `set` in a worker: per rule, the kinds it evaluates or why it cannot load. */
  async check(set: RuleSetSnapshot): Promise<RuleCheck[]> {
    const results: RuleCheck[] = [];
    let startAt = 0;
    while (startAt < set.rules.length) {
      const rest = { ...set, rules: set.rules.slice(startAt) };
      try {
        results.push(...((await this.run({ op: 'check', set: rest, memoryCapPages: this.options.memoryCapPages })) as RuleCheck[]));
        return results;
      } catch (err) {
        const stopped = err as RuleStoppedError;
        // The rules before the stopped one loaded in the worker that was replaced: check them again.
        const before = stopped.index === 0 ? [] : await this.check({ ...set, rules: rest.rules.slice(0, stopped.index) });
        results.push(...before, { error: stopped.message });
        startAt += stopped.index + 1;
      }
    }
    return results;
  }

  state(): RuleRunnerState {
    return { completed: this.pool.completed, workersReplaced: this.workersReplaced };
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  private async run(task: Omit<EvaluateTask, 'progress'> | Omit<CheckTask, 'progress'>): Promise<EvaluationResult | RuleCheck[]> {
    const shared = new SharedArrayBuffer(PROGRESS_BYTES);
    const progress = new Float64Array(shared);
    const abort = new TaskAbort();
    const deadline = this.options.deadlineMs;
    let overran = -1;
    const watch = () => {
      const running = progress[0]!;
      const elapsed = running === 0 ? 0 : Date.now() - progress[1]!;
      if (running !== 0 && elapsed >= deadline) {
        overran = running - 1;
        abort.abort();
        return;
      }
      timer = setTimeout(watch, running === 0 ? deadline : deadline - elapsed + 1);
    };
    let timer = setTimeout(watch, deadline);
    try {
      return await this.pool.run({ ...task, progress: shared } as RuleTask, { signal: abort });
    } catch (err) {
      this.workersReplaced++;
      if (overran >= 0) throw new RuleStoppedError(overran, `it ran past its ${deadline} ms deadline and was stopped`);
      // The worker died under the rule that was running (a crash, not a trap: traps are caught in the worker).
      const running = Math.max(0, progress[0]! - 1);
      throw new RuleStoppedError(running, `its worker died: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
