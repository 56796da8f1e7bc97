import type { WorkspaceSettings } from '../config/settings.js';
import { providerById, type ProviderId } from './providers.js';

/**
 * Retries and fallbacks of failed provider calls (seed 001 `upstreamRetry`). The contract the
 * caller keeps:
 *
 * - Targets are tried in `attemptTargets` order: the requested model, then its fallbacks.
 * - Each target gets up to `attemptsPerTarget` attempts (maxAttempts; 1 when retries are off).
 *   A failure is retryable when its status is in onStatus (`isRetryableStatus`) or it is a
 *   transport failure worth retrying (`isRetryableError`). A retryable failure is retried after
 *   `backoffMs`; once a target's attempts run out, the next target starts at once. A failure that
 *   is not retryable ends the plan and goes to the client as it is.
 * - Nothing is retried once the first byte of a response reached the client. For streams the
 *   first upstream chunk is checked before the client gets its 200, so an error there still can.
 * - The budget: the first attempt is always made; a retry or fallback starts only while
 *   `budgetLeftMs` is above zero, and a backoff never sleeps past the budget (`backoffMs` gives
 *   undefined instead, and the caller moves to the next target). An attempt in flight is bounded
 *   by the upstream timeouts, not cut by the budget, so total time is budgetMs plus at most one
 *   attempt.
 * - Every attempt (target, status or error code, duration) is recorded on the trace by the caller.
 */

export interface FallbackTarget {
  model?: string;
  provider?: string;
}

export interface RetrySettings {
  enabled: boolean;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  budgetMs: number;
  onStatus: readonly number[];
  fallbacks: Readonly<Record<string, readonly FallbackTarget[]>>;
}

/**
 * The proxy's own defaults. One retry per target: agents' SDKs retry too (the OpenAI and
 * Anthropic SDKs twice each), so more here multiplies into long waits. Backoff 200 ms doubling
 * to 2 s with full jitter spreads a burst of 429s. A 30 s budget bounds what retrying can add to
 * a call an agent is blocked on, yet covers a typical 429 retry-after. The statuses are the transient ones:
 * timeout, conflict, rate limit, server errors and Anthropic's 529 overloaded; never 501 or 505.
 */
export const DEFAULT_RETRY: RetrySettings = Object.freeze({
  enabled: true,
  maxAttempts: 2,
  initialBackoffMs: 200,
  maxBackoffMs: 2_000,
  budgetMs: 30_000,
  onStatus: Object.freeze([408, 409, 429, 500, 502, 503, 504, 529]),
  fallbacks: Object.freeze({}),
});

/** Only the fields that are set; `null` (the workspace cleared the setting) gives none. */
function given<T extends object>(fields: T | null | undefined): Partial<T> {
  if (fields === null || fields === undefined) return {};
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Workspace fields override the proxy's local fields, which override the defaults, field by field. */
export function effectiveRetry(local: Partial<RetrySettings> | undefined, workspace: WorkspaceSettings['upstreamRetry']): RetrySettings {
  return { ...DEFAULT_RETRY, ...given(local), ...given(workspace) };
}

export interface AttemptTarget {
  model: string;
  /** A provider id (aliases resolved); undefined: resolve the model the usual way. */
  provider: ProviderId | undefined;
}

/**
 * The requested model, then its fallbacks in order (the fallbacks keyed by exactly the requested
 * id). A target with only a provider keeps the requested model; one with only a model resolves it
 * normally. Fallbacks are skipped when retries are off, and so are repeats and targets naming a
 * provider that is neither an id nor an alias.
 */
export function attemptTargets(requestedModel: string, settings: RetrySettings): AttemptTarget[] {
  const targets: AttemptTarget[] = [{ model: requestedModel, provider: undefined }];
  if (!settings.enabled || !Object.hasOwn(settings.fallbacks, requestedModel)) return targets;
  const seen = new Set([`${requestedModel}\0`]);
  for (const fallback of settings.fallbacks[requestedModel] ?? []) {
    const provider = fallback.provider === undefined ? undefined : providerById(fallback.provider)?.id;
    if (fallback.provider !== undefined && provider === undefined) continue;
    const model = fallback.model ?? requestedModel;
    const key = `${model}\0${provider ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    targets.push({ model, provider });
  }
  return targets;
}

export function attemptsPerTarget(settings: RetrySettings): number {
  return settings.enabled ? settings.maxAttempts : 1;
}

/** Milliseconds of the budget left, counted from the start of the first attempt. */
export function budgetLeftMs(settings: RetrySettings, startedAt: number, now: number): number {
  return Math.max(0, settings.budgetMs - (now - startedAt));
}

/** A retry-after value (delay-seconds or an HTTP date) in ms from `now`; undefined when unreadable. */
function retryAfterMs(value: string, now: number): number | undefined {
  const v = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  // Date.parse reads bare numbers such as "-5" as years; an HTTP date always has a month name.
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Delay before retry number `retry` (1-based) of the same target: full jitter over an exponential
 * ceiling, initialBackoffMs × 2^(retry−1) capped at maxBackoffMs. A readable retry-after header
 * wins, maxBackoffMs notwithstanding. Undefined when the delay would not leave any of the budget
 * for the retry itself: do not sleep, move to the next target.
 */
export function backoffMs(
  retry: number,
  settings: RetrySettings,
  retryAfter: string | undefined,
  now: number,
  startedAt: number,
  random: () => number = Math.random,
): number | undefined {
  const hinted = retryAfter === undefined ? undefined : retryAfterMs(retryAfter, now);
  // Past 2^16 every initial value is far over the 60 s cap; the clamp keeps 0 × ∞ out.
  const ceiling = Math.min(settings.maxBackoffMs, settings.initialBackoffMs * 2 ** Math.min(retry - 1, 16));
  const delay = hinted ?? Math.floor(random() * ceiling);
  return delay < budgetLeftMs(settings, startedAt, now) ? delay : undefined;
}

export function isRetryableStatus(status: number, settings: RetrySettings): boolean {
  return settings.onStatus.includes(status);
}

const RETRYABLE_ERRORS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/**
 * Transport failures worth retrying, by error code: the connection was refused, timed out or
 * reset before any response byte (the caller only asks then), DNS failed for now, or no headers
 * came in time. Not a body timeout (the provider was already answering and billing), nor a host
 * DNS says does not exist.
 */
export function isRetryableError(code: string): boolean {
  return RETRYABLE_ERRORS.has(code);
}
