import { CircuitOpenError, InvalidOptionsError, SvcClientError } from './errors.js';

/**
 * A circuit breaker around tasks that call the gateway. After `failureThreshold` failures in a
 * row it opens: tasks are not run for `coolDownMs`; then one trial task runs (half open) and its
 * outcome closes or reopens the breaker.
 *
 * What counts as a failure is the gateway or the provider failing: the gateway unreachable or
 * timing out, a 5xx, a 429 that is not a spend cap, an error event inside a stream, an answer that
 * does not read. A policy verdict or a rejected request (bad key, malformed body) is the gateway
 * answering: it counts as a success. An error the task throws itself says nothing of the gateway
 * and leaves the breaker as it is.
 *
 * `failOpen` says what a task that cannot run (the breaker is open) or that failed as above gets:
 * false (the default) throws (CircuitOpenError, or the failure itself); true runs `defaultAction`
 * and returns its result. A policy verdict is always thrown, whatever failOpen says: failing open
 * is about an unavailable gateway, never about getting past its policy.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions<T> {
  /** Names what the breaker guards (in its events and errors); use one breaker per task type. */
  readonly taskType: string;
  /** Whether a task the breaker stops, or that fails, yields `defaultAction`'s result instead of an error. */
  readonly failOpen?: boolean;
  /** What to do instead of the task when failing open; needed with failOpen. `cause` is what stopped the task. */
  readonly defaultAction?: (cause: SvcClientError) => T | Promise<T>;
  /** Failures in a row that open the breaker (default 5). */
  readonly failureThreshold?: number;
  /** How long it stays open before a trial (default 30 s). */
  readonly coolDownMs?: number;
  /** Milliseconds now; the client's clock by default. */
  readonly clock?: () => number;
}

export interface BreakerTransition {
  readonly taskType: string;
  readonly from: BreakerState;
  readonly to: BreakerState;
  /** The failure that opened the breaker (on a move to open). */
  readonly cause: SvcClientError | null;
}

/** Errors that count against the gateway. */
export function isGatewayFailure(err: unknown): err is SvcClientError {
  return err instanceof SvcClientError && (err.code === 'gateway_unreachable' || err.code === 'upstream_failure' || err.code === 'invalid_response');
}

export class CircuitBreaker<T> {
  readonly taskType: string;
  private readonly failOpen: boolean;
  private readonly defaultAction: ((cause: SvcClientError) => T | Promise<T>) | undefined;
  private readonly threshold: number;
  private readonly coolDownMs: number;
  private readonly clock: () => number;
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private lastFailure: SvcClientError | null = null;
  private trialRunning = false;
  private readonly listeners = new Set<(t: BreakerTransition) => void>();

  constructor(opts: BreakerOptions<T>) {
    if (typeof opts.taskType !== 'string' || opts.taskType.trim() === '') throw new InvalidOptionsError('a circuit breaker needs a taskType');
    if (opts.failOpen === true && typeof opts.defaultAction !== 'function') throw new InvalidOptionsError(`breaker '${opts.taskType}': failOpen needs a defaultAction`);
    const threshold = opts.failureThreshold ?? 5;
    const coolDownMs = opts.coolDownMs ?? 30_000;
    if (!Number.isInteger(threshold) || threshold < 1) throw new InvalidOptionsError(`breaker '${opts.taskType}': failureThreshold must be a whole number of at least 1`);
    if (!Number.isFinite(coolDownMs) || coolDownMs < 0) throw new InvalidOptionsError(`breaker '${opts.taskType}': coolDownMs must be a number of milliseconds`);
    this.taskType = opts.taskType;
    this.failOpen = opts.failOpen === true;
    this.defaultAction = opts.defaultAction;
    this.threshold = threshold;
    this.coolDownMs = coolDownMs;
    this.clock = opts.clock ?? Date.now;
  }

  get state(): BreakerState {
    return this.current;
  }

  /** Calls `listener` on every change of state; returns a function that stops it. */
  onStateChange(listener: (t: BreakerTransition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs the task unless the breaker is open; see the class comment for what comes back. */
  async run(task: () => Promise<T>): Promise<T> {
    if (!this.admit()) return this.stopped(new CircuitOpenError(this.taskType, this.openedAt + this.coolDownMs, this.lastFailure));
    const trial = this.current === 'half_open';
    let result: T;
    try {
      result = await task();
    } catch (err) {
      if (trial) this.trialRunning = false;
      if (isGatewayFailure(err)) {
        this.recordFailure(err, trial);
        return this.stopped(err);
      }
      // A verdict or a rejected request is the gateway answering; the task's own errors say nothing of it.
      if (err instanceof SvcClientError && (err.code === 'policy_verdict' || err.code === 'request_rejected')) this.recordAnswer();
      throw err;
    }
    if (trial) this.trialRunning = false;
    this.recordAnswer();
    return result;
  }

  private recordAnswer(): void {
    this.failures = 0;
    if (this.current !== 'closed') this.move('closed', null);
  }

  /** Whether a task may run now; moves an open breaker whose cool-down is over to half open. */
  private admit(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'open') {
      if (this.clock() - this.openedAt < this.coolDownMs) return false;
      this.move('half_open', null);
    }
    // Half open: one trial at a time.
    if (this.trialRunning) return false;
    this.trialRunning = true;
    return true;
  }

  private recordFailure(err: SvcClientError, trial: boolean): void {
    this.lastFailure = err;
    this.failures += 1;
    if (trial || (this.current === 'closed' && this.failures >= this.threshold)) {
      this.openedAt = this.clock();
      this.move('open', err);
    }
  }

  private async stopped(cause: SvcClientError): Promise<T> {
    if (!this.failOpen) throw cause;
    return this.defaultAction!(cause);
  }

  private move(to: BreakerState, cause: SvcClientError | null): void {
    const from = this.current;
    this.current = to;
    for (const listener of this.listeners) {
      try {
        listener({ taskType: this.taskType, from, to, cause });
      } catch (err) {
        process.emitWarning(`a circuit breaker listener threw: ${(err as Error).message}`);
      }
    }
  }
}
