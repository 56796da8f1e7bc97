import { SvcError, UpstreamError } from '../lib/errors.js';
import {
  attemptsPerTarget,
  backoffMs,
  budgetLeftMs,
  isRetryableError,
  isRetryableStatus,
  type AttemptTarget,
  type RetrySettings,
} from '../upstream/retry-plan.js';
import type { Exchange } from './exchange.js';

/** Why an attempt failed before anything reached the client. */
export interface AttemptFailure {
  readonly status?: number;
  /** A transport error code, or `stream_error` for an error event at the start of a stream. */
  readonly code?: string;
  readonly retryAfter?: string;
}

/** What the relay asks before giving a failure to the client, and tells when it gives it back. */
export interface RetryHook {
  /** Whether this failure may be retried now (it is retryable, and attempts and budget remain). */
  allows(failure: AttemptFailure): boolean;
  /** The attempt failed before the client saw anything; the call goes on with the next attempt. */
  retry(failure: AttemptFailure): void;
}

/** One attempt's record on the trace. */
export interface AttemptRecord {
  model: string;
  provider: string;
  /** The upstream status, or null for a transport failure. */
  status: number | null;
  error: string | null;
  ms: number;
}

/** Sends one attempt at a target; throws a SvcError when the target cannot be used (a check refused it). */
export type SendAttempt = (target: AttemptTarget, hook: RetryHook) => void;

/**
 * One client request's way through its attempts: the requested model, then each fallback
 * target, each tried up to the plan's attempts with backoff between, within the retry budget
 * (see retry-plan.ts for the contract). A fallback that a check refuses is skipped and recorded.
 */
export class UpstreamCall implements RetryHook {
  private targetIndex = 0;
  private attemptOnTarget = 1;
  private readonly startedAt = Date.now();
  private attemptStartedAt = Date.now();
  /** What `allows` decided for the failure it was asked about. */
  private next: { delayMs: number } | 'next-target' | null = null;

  constructor(
    private readonly ex: Exchange,
    private readonly targets: readonly AttemptTarget[],
    private readonly settings: RetrySettings,
    private readonly send: SendAttempt,
  ) {}

  /** The first attempt: a refusal of the requested model itself goes to the client. */
  start(): void {
    this.attemptStartedAt = Date.now();
    this.send(this.targets[0]!, this);
  }

  /**
   * Decides the next step now, so that a failure is only swallowed when something will really be
   * tried: the same target after its backoff, or the next target. Otherwise the failure goes to
   * the client as it is.
   */
  allows(failure: AttemptFailure): boolean {
    this.next = null;
    const retryable =
      failure.code === 'stream_error' ||
      (failure.status !== undefined && isRetryableStatus(failure.status, this.settings)) ||
      (failure.code !== undefined && isRetryableError(failure.code));
    if (!retryable || budgetLeftMs(this.settings, this.startedAt, Date.now()) <= 0) return false;
    if (this.attemptOnTarget < attemptsPerTarget(this.settings)) {
      const delay = backoffMs(this.attemptOnTarget, this.settings, failure.retryAfter, Date.now(), this.startedAt);
      if (delay !== undefined) this.next = { delayMs: delay };
    }
    if (this.next === null && this.targetIndex < this.targets.length - 1) this.next = 'next-target';
    return this.next !== null;
  }

  retry(failure: AttemptFailure): void {
    this.record(failure.status ?? null, failure.code ?? (failure.status !== undefined ? `upstream_${failure.status}` : null));
    const next = this.next;
    this.next = null;
    if (this.ex.gone || next === null) return;
    if (next === 'next-target') {
      this.nextTarget();
      return;
    }
    this.attemptOnTarget++;
    setTimeout(() => this.attempt(), next.delayMs);
  }

  private nextTarget(): void {
    while (++this.targetIndex < this.targets.length) {
      this.attemptOnTarget = 1;
      if (this.attempt()) return;
    }
    this.ex.fail(new UpstreamError('Every upstream attempt failed; see the trace for each one.', { code: 'upstream_exhausted' }));
  }

  /** Sends the current attempt; false when a check refused the target (recorded, skipped). */
  private attempt(): boolean {
    if (this.ex.gone) return true;
    const target = this.targets[this.targetIndex]!;
    this.attemptStartedAt = Date.now();
    try {
      this.send(target, this);
      return true;
    } catch (err) {
      if (!(err instanceof SvcError)) throw err;
      this.record(null, err.code);
      return false;
    }
  }

  private record(status: number | null, error: string | null): void {
    this.ex.attempts.push({
      model: this.ex.model ?? '',
      provider: this.ex.provider ?? '',
      status,
      error,
      ms: Date.now() - this.attemptStartedAt,
    });
  }
}
