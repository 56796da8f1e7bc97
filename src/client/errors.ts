import type { Verdict } from './outcomes.js';

/**
 * What the client throws. Every error is an SvcClientError with a stable `code`; `gatewayCode`
 * is the proxy's (or provider's) own `error.code` when the answer carried one (`dlp_blocked`,
 * `policy_denied`, `invalid_api_key`, …) and `traceId` names the proxy's trace when there is one.
 */
export type SvcClientErrorCode =
  | 'policy_verdict'
  | 'request_rejected'
  | 'upstream_failure'
  | 'gateway_unreachable'
  | 'invalid_response'
  | 'circuit_open'
  | 'invalid_options'
  | 'message_conversion';

export interface SvcClientErrorDetails {
  readonly status?: number | null;
  readonly traceId?: string | null;
  readonly gatewayCode?: string | null;
  readonly cause?: unknown;
}

export class SvcClientError extends Error {
  readonly code: SvcClientErrorCode;
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | null;
  readonly traceId: string | null;
  readonly gatewayCode: string | null;

  constructor(code: SvcClientErrorCode, message: string, details: SvcClientErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = details.status ?? null;
    this.traceId = details.traceId ?? null;
    this.gatewayCode = details.gatewayCode ?? null;
  }
}

/** The gateway's policy refused the request or withheld its answer (enforcement KILL). */
export class VerdictError extends SvcClientError {
  constructor(readonly verdict: Verdict) {
    super('policy_verdict', verdict.reason, { status: verdict.status, traceId: verdict.traceId, gatewayCode: verdict.code });
  }
}

/** The gateway refused the request itself for a reason that is not policy: a bad key, a malformed body, an unknown route (4xx). */
export class RequestRejectedError extends SvcClientError {
  constructor(message: string, details: SvcClientErrorDetails) {
    super('request_rejected', message, details);
  }
}

/** The gateway or the provider behind it failed: a 5xx, a 429 that is not a spend cap, or an error event inside a stream. */
export class UpstreamFailureError extends SvcClientError {
  constructor(message: string, details: SvcClientErrorDetails) {
    super('upstream_failure', message, details);
  }
}

/** The gateway could not be reached, or did not answer in time. */
export class GatewayUnreachableError extends SvcClientError {
  constructor(message: string, details: SvcClientErrorDetails = {}) {
    super('gateway_unreachable', message, details);
  }
}

/** An answer that is not what the route promises (not JSON, or not the expected shape). */
export class InvalidResponseError extends SvcClientError {
  constructor(message: string, details: SvcClientErrorDetails = {}) {
    super('invalid_response', message, details);
  }
}

/** A circuit breaker is open and its wrapper fails closed: the task was not run. */
export class CircuitOpenError extends SvcClientError {
  constructor(
    readonly taskType: string,
    /** When (by the breaker's clock, ms) the breaker lets a trial call through. */
    readonly retryAt: number,
    /** The failure that opened the breaker. */
    cause: unknown,
  ) {
    super('circuit_open', `the circuit breaker for task type '${taskType}' is open after repeated gateway failures; the task was not run`, { cause });
  }
}

/** Options the client or a breaker cannot work with. */
export class InvalidOptionsError extends SvcClientError {
  constructor(message: string) {
    super('invalid_options', message);
  }
}

/** A message that cannot be expressed in the other format; `path` names where (`messages[2].content[0]`). */
export class MessageConversionError extends SvcClientError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super('message_conversion', `${path}: ${message}`);
  }
}
